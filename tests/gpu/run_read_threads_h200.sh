#!/usr/bin/env bash
# Does the driver answer a cold query's first reads side by side? Through the
# device tool, one call (~3 min): builds bench/query_phases on the machine,
# starts the torch training loop, then times the first reads of the probes
# behind the 28 fields of bench/side_by_side.py on 1, 2, 4 and 8 threads, each
# in a fresh process (a first read is cold only once a process), alternating,
# 15 rounds; prints the medians. Carry .devtree: bin/bench/query_phases from a
# release build made here (with lib/ as for run_sweep_h200.sh), else
# include/sqlite3.h to build it there (release_build.sh). Writes
# $OUT/read_threads.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
QP=$ROOT/.devtree/bin/bench/query_phases
if [ ! -x "$QP" ]; then
  . "$ROOT/tests/gpu/release_build.sh"
  release_build /tmp/gw-build-threads "$OUT/build.log" query_phases || exit 1
  QP=/tmp/gw-build-threads/bench/query_phases
fi
export LD_LIBRARY_PATH=$ROOT/.devtree/lib
FIELDS=$(cd "$ROOT/bench" && python3 -c "import side_by_side; print(side_by_side.FIELDS)")
python3 "$ROOT/tests/gpu/train_loop.py" --seconds 240 --hold-gib 8 >/tmp/train.log 2>&1 &
TRAIN=$!
sleep 15
python3 - "$QP" "$FIELDS" <<'PY' | tee "$OUT/read_threads.txt"
import re, statistics, subprocess, sys
qp, fields = sys.argv[1], sys.argv[2]
threads = [1, 2, 4, 8]
times = {k: [] for k in threads}
probes = None
for _ in range(15):
    for k in threads:
        out = subprocess.run([qp, "threads", str(k), fields], capture_output=True, text=True).stdout
        m = re.search(r"probes=(\d+) reads_ms=([\d.]+)", out)
        if not m:
            sys.exit(f"query_phases threads {k}: {out!r}")
        probes = m.group(1)
        times[k].append(float(m.group(2)))
print(f"first reads of the {probes} probes behind 28 fields, median of 15 fresh processes (ms):")
base = statistics.median(times[1])
for k in threads:
    med = statistics.median(times[k])
    print(f"  {k} thread(s): median {med:.2f}  min {min(times[k]):.2f}  max {max(times[k]):.2f}"
          f"  ({med / base:.2f} of one thread)")
PY
echo "== phases of the serial path (5 fresh processes)"
for i in 1 2 3 4 5; do "$QP"; done | tee -a "$OUT/read_threads.txt"
kill $TRAIN 2>/dev/null; wait $TRAIN 2>/dev/null
exit 0
