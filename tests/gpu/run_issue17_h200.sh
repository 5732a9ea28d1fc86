#!/usr/bin/env bash
# Issue 17 on the H200, through the device tool, in one call (~5 min): with a
# torch training loop running, bench/side_by_side.py (warm and cold one-shot
# answers against nvidia-smi, nvitop and gpustat; the daemon at 1 Hz beside a
# pynvml loop making the same calls, nvidia-smi -l 1, the C loop and nvitop's
# collector; /metrics under load), then where a cold status's time goes
# (variants timed, one run traced) and bench/query_phases.
# Carry .devtree (bin/gpuwatch, bin/gpuwatch-full and
# bin/bench/{nvml_c_loop,query_phases} from a release build made here, lib/
# with the libraries the GPU machine lacks) and
# .peers (the peers' sources, kept beside the repository, not in it). Writes $OUT/side_by_side.txt, $OUT/status_phases.txt,
# $OUT/status.strace.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.devtree/lib
export PYTHONUNBUFFERED=1
GW=$PWD/.devtree/bin/gpuwatch
export PATH=$PWD/.devtree/bin:$PATH  # wrk
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
echo "== the libraries each executable loads (ldd)"
for b in "$GW" "$(dirname "$GW")/gpuwatch-full" .devtree/bin/gpuwatch-before; do
  [ -x "$b" ] || continue; echo "$b: $(ldd "$b" | awk '{print $1}' | tr '\n' ' ')"; done
python3 tests/gpu/train_loop.py --seconds 420 --hold-gib 8 >/tmp/train.log 2>&1 &
TRAIN=$!
sleep 15
# .devtree/bin/gpuwatch-before, when there: the front of an earlier commit, timed alongside.
BEFORE=()
[ -x .devtree/bin/gpuwatch-before ] && BEFORE=(--front-before .devtree/bin/gpuwatch-before)
python3 bench/side_by_side.py "$GW" --peers .peers --runs 20 --seconds 120 \
  --c-loop .devtree/bin/bench/nvml_c_loop "${BEFORE[@]}" 2>&1 | tee "$OUT/side_by_side.txt"
{
  echo "== the threads of an idle daemon (names from /proc/PID/task/*/comm)"
  rt=$(mktemp -d)
  GPUWATCH_RUNTIME_DIR=$rt "$GW" serve -i 1s --listen 127.0.0.1:0 >/dev/null 2>&1 &
  SERVE=$!
  sleep 8
  for t in /proc/$SERVE/task/*; do echo "  $(cat "$t/comm")"; done
  kill $SERVE; wait $SERVE 2>/dev/null
  echo "== cold status variants: median of 15 alternating runs (ms)"
  python3 - "$GW" <<'PY'
import statistics, subprocess, sys, time
gw = sys.argv[1]
variants = {
    "nvidia-smi": ["nvidia-smi"],
    "status": [gw, "--no-daemon", "--color=never"],
    "status --no-processes": [gw, "--no-daemon", "--color=never", "--no-processes"],
    "status --json": [gw, "--no-daemon", "--json"],
    "query, 28 fields": [gw, "--no-daemon", "query", "--query-gpu=index,uuid,name,serial,"
        "driver_version,pci.bus_id,pstate,temperature.gpu,temperature.memory,utilization.gpu,"
        "utilization.memory,memory.total,memory.used,memory.free,memory.reserved,power.draw,"
        "power.limit,enforced.power.limit,clocks.sm,clocks.mem,clocks.gr,clocks.max.sm,fan.speed,"
        "compute_mode,persistence_mode,ecc.errors.uncorrected.volatile.total,"
        "pcie.link.gen.current,timestamp", "--format=csv"],
    "query --query-compute-apps": [gw, "--no-daemon", "query",
        "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
    "--version": [gw, "--version"],
}
times = {k: [] for k in variants}
for k, c in variants.items():
    subprocess.run(c, stdout=subprocess.DEVNULL)
for _ in range(15):
    for k, c in variants.items():
        t0 = time.perf_counter()
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[k].append(time.perf_counter() - t0)
for k, t in times.items():
    print(f"  {k:30s} {1000 * statistics.median(t):8.2f}")
PY
  echo "== query_phases, 10 fresh processes"
  for i in $(seq 10); do .devtree/bin/bench/query_phases; done
  echo "== query_phases probes"
  .devtree/bin/bench/query_phases probes
} >"$OUT/status_phases.txt" 2>&1
if command -v strace >/dev/null; then
  strace -f -tt -T -o "$OUT/status.strace" "$GW" --no-daemon --color=never >/dev/null 2>&1
else
  echo "no strace on this machine" >"$OUT/status.strace"
fi
kill $TRAIN 2>/dev/null
cat "$OUT/status_phases.txt"
