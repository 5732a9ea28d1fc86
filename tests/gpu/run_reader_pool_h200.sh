#!/usr/bin/env bash
# One reader for every GPU (sampler/device_readers.*) on a real GPU, through
# the device tool, in one call (~3 min), from release binaries built here:
# bench/readers_bench (a round inline against through the readers) of this
# build and of the build before it (a thread per GPU) taking turns, 3 runs
# each; then an idle `gpuwatch serve`'s threads by name, and a default
# `gpuwatch watch` for 12 s whose samples must come once a second with every
# GPU's health "ok"; then `bench/watch_cost.py --real --serve` for 60 s.
# Carry .devtree (bin/gpuwatch, bin/gpuwatch-full, bin/bench/readers_bench,
# bin/bench/readers_bench-before, bin/bench/nvml_c_loop, lib/). Writes
# $OUT/reader_pool.txt.
set -u
# shellcheck source=tests/gpu/devtree_env.sh
. "$(dirname "$0")/devtree_env.sh"
R=$OUT/reader_pool.txt
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv
  for run in 1 2 3; do
    for b in readers_bench-before readers_bench; do
      echo "== run $run: $b"
      "$BIN/bench/$b" 2000
    done
  done
  echo "== the threads of an idle daemon (names from /proc/PID/task/*/comm), 8 s in"
  rt=$(mktemp -d)
  GPUWATCH_RUNTIME_DIR=$rt "$BIN/gpuwatch" serve -i 1s --listen 127.0.0.1:0 >/tmp/serve.log 2>&1 &
  SERVE=$!
  sleep 8
  for t in /proc/$SERVE/task/*; do echo "  $(cat "$t/comm")"; done
  kill $SERVE
  wait $SERVE 2>/dev/null
  echo "== watch, 12 s (default flags), recording JSON Lines"
  GPUWATCH_RUNTIME_DIR=$rt "$BIN/gpuwatch" watch --duration 12s --jsonl /tmp/w.jsonl >/tmp/watch.log 2>&1
  echo "watch exit $?"
  tail -3 /tmp/watch.log
  python3 - <<'PY'
import json
samples = [json.loads(l) for l in open("/tmp/w.jsonl") if '"type":"sample"' in l.replace(" ", "")]
print(f"{len(samples)} samples; stale {sum(s['stale'] for s in samples)}; health",
      sorted({d["health"] for s in samples for d in s["devices"]}),
      "; sample_duration_us median", sorted(s["sample_duration_us"] for s in samples)[len(samples) // 2])
PY
  echo "== the daemon at 1 Hz beside the C loop, 60 s"
  mkdir -p /tmp/gwb/bench
  cp "$BIN/gpuwatch" "$BIN/gpuwatch-full" /tmp/gwb/ && cp "$BIN/bench/nvml_c_loop" /tmp/gwb/bench/
  python3 bench/watch_cost.py /tmp/gwb 60 --real --serve
} >"$R" 2>&1
cat "$R"
