#!/usr/bin/env bash
# Real-GPU checks, through the device tool, for the stream probes (issue 3:
# the driver's sample buffers and XID events) and serve's /metrics (issue 4).
# Runs the release binaries built on the dev machine (carry .devtree: bin/,
# bin/bench/, lib/ with the shared libraries the H200 image lacks).
# Writes to $OUT: machine.txt, buffers.txt, watch.txt + watch.jsonl,
# stream_fields.txt, doctor.txt, sample_bench.txt, metrics_real.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=$ROOT/.devtree/lib
GW=$ROOT/.devtree/bin/gpuwatch
B=$ROOT/.devtree/bin/bench
cd "$ROOT"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; $GW --version; } >"$OUT/machine.txt" 2>&1
timeout 60 python3 tests/gpu/sample_buffers.py >"$OUT/buffers.txt" 2>&1
python3 tests/gpu/train_loop.py --seconds 20 >"$OUT/train.txt" 2>&1 &
TRAIN=$!
timeout 60 $GW watch -i 1s --duration 30s --color=never --jsonl "$OUT/watch.jsonl" >"$OUT/watch.txt" 2>&1
wait $TRAIN
python3 tests/gpu/stream_fields.py "$OUT/watch.jsonl" >"$OUT/stream_fields.txt" 2>&1
timeout 60 $GW doctor >"$OUT/doctor.txt" 2>&1
{
  for round in 1 2 3; do
    echo "== round $round"
    $B/sample_bench 2000
    GPUWATCH_BENCH_NO_STREAMS=1 $B/sample_bench 2000
    $B/nvml_c_loop 2000
    GPUWATCH_C_LOOP_NO_STREAMS=1 $B/nvml_c_loop 2000
    python3 bench/pynvml_bench.py 2000
  done
} >"$OUT/sample_bench.txt" 2>&1
timeout 200 python3 bench/metrics_real.py "$GW" 15 >"$OUT/metrics_real.txt" 2>&1
echo "done"
