"""When a cold one-shot answers and when it ends: the median time to the first byte on stdout and
to the exit (the driver's teardown comes after the answer), for nvidia-smi and gpuwatch side by side.

    python3 bench/oneshot_split.py GPUWATCH N

On the GPU machine (docs/BENCHMARKS.md, issue 17).
"""
import os, select, statistics, subprocess, sys, time
gw, n = sys.argv[1], int(sys.argv[2])
cmds = {
    "nvidia-smi --version": ["nvidia-smi", "--version"],
    "gpuwatch --version": [gw, "--version"],
    "nvidia-smi -L": ["nvidia-smi", "-L"],
    "nvidia-smi --query-gpu=index": ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
    "gpuwatch query --query-gpu=index": [gw, "--no-daemon", "query", "--query-gpu=index", "--format=csv,noheader"],
    "nvidia-smi --query-gpu=index,clocks.max.sm": ["nvidia-smi", "--query-gpu=index,clocks.max.sm", "--format=csv,noheader"],
    "gpuwatch query index,clocks.max.sm": [gw, "--no-daemon", "query", "--query-gpu=index,clocks.max.sm", "--format=csv,noheader"],
}
first = {k: [] for k in cmds}; done = {k: [] for k in cmds}
for _ in range(n):
    for k, c in cmds.items():
        t0 = time.perf_counter()
        p = subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        os.read(p.stdout.fileno(), 1)
        t1 = time.perf_counter()
        p.stdout.read(); p.wait()
        t2 = time.perf_counter()
        first[k].append(1000 * (t1 - t0)); done[k].append(1000 * (t2 - t0))
print(f"{'command':48s} {'first byte':>10s} {'exit':>8s} {'after':>7s}")
for k in cmds:
    f, d = statistics.median(first[k]), statistics.median(done[k])
    print(f"{k:48s} {f:10.2f} {d:8.2f} {d - f:7.2f}")
