#!/usr/bin/env bash
# Real-GPU costs, through the device tool: the driver sample-buffer and XID
# calls (ctypes), /metrics against nvidia-smi and pynvml per scrape, and
# watch at 1 Hz against the C loop making the same calls. Carry .devtree.
set -u
export LD_LIBRARY_PATH=$PWD/.devtree/lib
timeout 60 python3 tests/gpu/sample_buffers.py > $OUT/buffers.txt 2>&1
timeout 200 python3 bench/metrics_real.py .devtree/bin/gpuwatch 15 > $OUT/metrics_real.txt 2>&1
timeout 200 python3 bench/watch_cost.py .devtree/bin 150 --real > $OUT/watch_cost.txt 2>&1
cat $OUT/buffers.txt $OUT/metrics_real.txt $OUT/watch_cost.txt
