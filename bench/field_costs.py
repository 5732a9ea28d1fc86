"""Per field, what a cold one-shot costs: nvidia-smi --query-gpu=index,FIELD and gpuwatch
--no-daemon query of the same, each minus index alone; medians of N alternating fresh runs.

    python3 bench/field_costs.py GPUWATCH FIELDS N

On the GPU machine (docs/BENCHMARKS.md, issue 17). FIELDS: an nvidia-smi --query-gpu list.
"""
import statistics, subprocess, sys, time
gw, fields, n = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
def cmds(q):
    return {"smi": ["nvidia-smi", f"--query-gpu={q}", "--format=csv"],
            "gw": [gw, "--no-daemon", "query", f"--query-gpu={q}", "--format=csv"]}
qs = ["index"] + [f"index,{f}" for f in fields if f != "index"] + [",".join(fields)]
t = {(q, k): [] for q in qs for k in ("smi", "gw")}
for _ in range(n):
    for q in qs:
        for k, c in cmds(q).items():
            t0 = time.perf_counter(); subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t[(q, k)].append(1000 * (time.perf_counter() - t0))
m = {key: statistics.median(v) for key, v in t.items()}
b_s, b_g = m[("index", "smi")], m[("index", "gw")]
print(f"{'query':40s} {'smi ms':>8s} {'gw ms':>8s} {'smi+':>7s} {'gw+':>7s} {'gw/smi':>7s}")
for q in qs:
    s, g = m[(q, "smi")], m[(q, "gw")]
    name = q if q != qs[-1] else f"all {len(fields)}"
    print(f"{name:40s} {s:8.2f} {g:8.2f} {s-b_s:7.2f} {g-b_g:7.2f} {g/s:7.3f}")
