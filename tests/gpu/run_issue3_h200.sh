#!/usr/bin/env bash
# Real-GPU checks for watch / run (issue 3), through the device tool: the cost
# of `gpuwatch run --interval 100ms` on a torch loop (paired runs), `run`'s
# summary with socket marks on a real job, JAX pre-allocation diagnosed, and
# watch's CPU and RSS at 1 Hz next to `nvidia-smi -l 1`.
# Carry .devtree (tests/gpu/release_build.sh says what it holds).
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/gw-build3
. "$ROOT/tests/gpu/release_build.sh"
release_build $B "$OUT/build3.log" gpuwatch || exit 1
GW=$B/gpuwatch
cd "$ROOT/tests/gpu"
{
  echo "== overhead: torch loop steps/s, alone vs under gpuwatch run --interval 100ms (paired, 6 pairs)"
  for i in 1 2 3 4 5 6; do
    echo "alone $(python3 train_loop.py --steps 400 | grep steps_per_second)"
    echo "under $($GW run --interval 100ms --quiet -- python3 train_loop.py --steps 400 | grep steps_per_second)"
  done
} >"$OUT/overhead.txt" 2>&1
{
  echo "== gpuwatch run on a torch job with marks over GPUWATCH_SOCKET"
  $GW run --json "$OUT/run_torch.json" --db /tmp/run.db -- python3 train_loop.py --steps 600 --hold-gib 4 2>&1
  echo "exit=$?"
  ls -l /tmp/run.db
  echo; echo "== JAX default pre-allocation under gpuwatch run (75 s)"
  $GW run --interval 500ms --json "$OUT/run_jax.json" -- python3 jax_prealloc.py 75 2>&1
  echo "exit=$?"
} >"$OUT/run.txt" 2>&1
{
  echo "== CPU and RSS at 1 Hz for 30 s (psutil, same run)"
  python3 cpu_rss.py "gpuwatch watch -i 1s" $GW watch -i 1s --duration 30s --quiet
  python3 cpu_rss.py "nvidia-smi -l 1" timeout 30 nvidia-smi --query-gpu=index,memory.used,utilization.gpu,temperature.gpu,power.draw --format=csv -l 1
  python3 cpu_rss.py "gpuwatch watch -i 1s" $GW watch -i 1s --duration 30s --quiet
  python3 cpu_rss.py "nvidia-smi -l 1" timeout 30 nvidia-smi --query-gpu=index,memory.used,utilization.gpu,temperature.gpu,power.draw --format=csv -l 1
} >"$OUT/watch_cost.txt" 2>&1
cat "$OUT/overhead.txt"; grep -E "diagnosis|preallocation|steps_per|marks|framework|exit=" "$OUT/run.txt"; cat "$OUT/watch_cost.txt"
