#!/usr/bin/env bash
# Would NVML_INIT_FLAG_NO_ATTACH make a cold one-shot answer cheaper? (issue
# 17, item 2). Through the device tool (~1 min), carrying .devtree
# (bin/bench/init_flags, bin/gpuwatch, bin/gpuwatch-full, lib/): 15 rounds
# of fresh processes of `init_flags 0`, `2` (NO_ATTACH) and `1` (NO_GPUS), then the
# medians of each phase and first read, with the return codes seen; and, in
# the same call, nvidia-smi --query-gpu against gpuwatch query for the same
# eight fields. Writes $OUT/init_flags.txt.
set -u
# shellcheck source=tests/gpu/devtree_env.sh
. "$(dirname "$0")/devtree_env.sh"
R=$OUT/init_flags.txt
{
  nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
  uname -r
  for i in $(seq 15); do
    "$BIN/bench/init_flags" 0
    "$BIN/bench/init_flags" 2
    "$BIN/bench/init_flags" 1
  done
} >"$OUT/init_flags_raw.txt" 2>&1
python3 - "$OUT/init_flags_raw.txt" >"$R" <<'PY'
import re, statistics, sys
runs = {}
for line in map(str.rstrip, open(sys.argv[1])):
    if not line.startswith("flags="):
        print(line.rstrip())
        continue
    if "init_ms" not in line:
        continue  # said before the reads (stderr)
    kv = dict(re.findall(r"(\w+)=([^ ]+)", line))
    runs.setdefault(kv["flags"], []).append(kv)
for flags, rows in sorted(runs.items()):
    print(f"flags={flags} runs={len(rows)}", end="")
    for key in rows[0]:
        if key == "flags":
            continue
        values = [r[key] for r in rows]
        if "/rc" in values[0]:
            ms = [float(v.split("/rc")[0]) for v in values]
            rcs = sorted({v.split("/rc")[1] for v in values})
            print(f" {key}={statistics.median(ms):.2f}ms(rc {','.join(rcs)})", end="")
        else:
            try:
                print(f" {key}={statistics.median(float(v) for v in values):.2f}", end="")
            except ValueError:
                print(f" {key}={sorted(set(values))}", end="")
    print()
PY
FIELDS=index,name,temperature.gpu,utilization.gpu,memory.used,power.draw,enforced.power.limit,clocks.sm
python3 - "$BIN/gpuwatch" "$FIELDS" >>"$R" <<'PY'
import statistics, subprocess, sys, time
gw, fields = sys.argv[1], sys.argv[2]
cmds = {"nvidia-smi": ["nvidia-smi", f"--query-gpu={fields}", "--format=csv"],
        "gpuwatch": [gw, "--no-daemon", "query", f"--query-gpu={fields}", "--format=csv"]}
times = {k: [] for k in cmds}
for _ in range(15):
    for k, c in cmds.items():
        t = time.perf_counter()
        subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
        times[k].append((time.perf_counter() - t) * 1e3)
m = {k: statistics.median(v) for k, v in times.items()}
print(f"cold query, 8 fields, median of 15 alternating: nvidia-smi {m['nvidia-smi']:.2f} ms, "
      f"gpuwatch {m['gpuwatch']:.2f} ms, ratio {m['gpuwatch'] / m['nvidia-smi']:.3f}")
PY
cat "$R"
