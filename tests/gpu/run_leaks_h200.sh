#!/usr/bin/env bash
# Real-GPU leak check (issue 3), through the device tool: a torch loop that
# keeps 1 MiB per step (~66 steps/s) under `gpuwatch run --leak-window 10s`
# must be flagged with its rate and a time-to-OOM; the same loop without the
# leak must raise no alarm; JAX's default pre-allocation must be diagnosed.
# Also: the HTML report of a real job, `gpuwatch report` of its recording,
# and watch's CPU / RSS at 1 Hz next to a C loop making the same NVML calls.
# Carry .devtree (tests/gpu/release_build.sh says what it holds).
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/gw-build-leaks
. "$ROOT/tests/gpu/release_build.sh"
release_build $B "$OUT/build.log" gpuwatch nvml_c_loop || exit 1
GW=$B/gpuwatch
cd "$ROOT/tests/gpu"
export PYTHONUNBUFFERED=1
{
  echo "== leak: train_loop.py --seconds 140 --leak 1 under gpuwatch run -i 200ms --leak-window 10s"
  $GW run -i 200ms --leak-window 10s --json "$OUT/leak.json" --report "$OUT/leak.html" \
    --jsonl /tmp/leak.jsonl -- python3 train_loop.py --seconds 140 --leak 1 2>&1
  echo "exit=$?"
  echo; echo "== gpuwatch report of the same job's JSON Lines recording"
  $GW report /tmp/leak.jsonl -o "$OUT/leak_from_jsonl.html" 2>&1
  echo "exit=$?"
} >"$OUT/leak.txt" 2>&1
{
  echo "== no leak: train_loop.py --seconds 140 under gpuwatch run -i 200ms --leak-window 10s"
  $GW run -i 200ms --leak-window 10s --json "$OUT/noleak.json" -- python3 train_loop.py --seconds 140 2>&1
  echo "exit=$?"
} >"$OUT/noleak.txt" 2>&1
{
  echo "== JAX default pre-allocation under gpuwatch run (30 s)"
  $GW run --interval 500ms -- python3 jax_prealloc.py 30 2>&1
  echo "exit=$?"
  echo; echo "== watch -i 1s for 20 s next to a C loop with the same NVML calls at 1 Hz"
  python3 "$ROOT/bench/watch_cost.py" $B 20 --real 2>&1
} >"$OUT/misc.txt" 2>&1
grep -E "leak|OOM|exit=|steps_per" "$OUT/leak.txt" | head -20
grep -E "leak|exit=|steps_per" "$OUT/noleak.txt"
grep -E "diagnos|preallocation|exit=|cpu_percent|ratio" "$OUT/misc.txt"
