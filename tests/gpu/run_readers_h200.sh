#!/usr/bin/env bash
# The per-GPU readers (issue 13, item 12) on a real GPU, through the device
# tool, in one call (~4 min): a round of reads inline against through the
# readers (bench/readers_bench), beside sample_bench and the plain C loop for
# reference, 3 rounds each; then a default `gpuwatch watch` for 12 s whose
# recorded samples must come once a second with every GPU's health "ok"
# (serve needs cpp-httplib, which the device machine lacks).
# Carry .pydeps (tests/gpu/python_deps.sh) and .devtree (include/sqlite3.h,
# web/). Writes $OUT/readers.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$ROOT/.pydeps/root/usr
export LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=/tmp/gw-readers
[ -x $B/gpuwatch ] || {
  cmake -S "$ROOT" -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUWATCH_BUILD_TESTS=OFF \
    -DGPUWATCH_BUILD_BENCH=ON -DGPUWATCH_BUILD_FAKE_NVML=OFF -DCMAKE_PREFIX_PATH=$P \
    -DGPUWATCH_WEB_DIST=$ROOT/.devtree/web -DSQLite3_INCLUDE_DIR=$ROOT/.devtree/include &&
    cmake --build $B -j16
} >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
R=$OUT/readers.txt
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv
  for round in 1 2 3; do
    echo "== round $round"
    $B/bench/readers_bench 2000
    $B/bench/sample_bench 2000
    $B/bench/nvml_c_loop 2000
  done
  echo "== watch, 12 s (default flags), recording JSON Lines"
  $B/gpuwatch watch --duration 12s --jsonl /tmp/w.jsonl >/tmp/watch.log 2>&1
  echo "watch exit $?"; tail -3 /tmp/watch.log
  python3 - <<'PY'
import json
samples = [json.loads(l) for l in open("/tmp/w.jsonl") if '"type":"sample"' in l.replace(" ", "")]
print(f"{len(samples)} samples; stale {sum(s['stale'] for s in samples)}; health",
      sorted({d["health"] for s in samples for d in s["devices"]}),
      "; sample_duration_us median", sorted(s["sample_duration_us"] for s in samples)[len(samples) // 2])
PY
} >"$R" 2>&1
cat "$R"
