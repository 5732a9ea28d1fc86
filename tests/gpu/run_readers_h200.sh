#!/usr/bin/env bash
# The per-GPU readers (issue 13, item 12) on a real GPU, through the device
# tool, in one call (~4 min): a round of reads inline against through the
# readers (bench/readers_bench), beside sample_bench and the plain C loop for
# reference, 3 rounds each; then a default `gpuwatch serve` for 20 s whose
# snapshots must advance once a second with every GPU's health "ok".
# Carry .pydeps (tests/gpu/python_deps.sh) and .devtree (include/sqlite3.h,
# web/). Writes $OUT/readers.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$ROOT/.pydeps/root/usr
export LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=/tmp/gw-readers
{
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
  echo "== serve, 20 s"
  $B/gpuwatch serve --listen 127.0.0.1:9499 >/tmp/serve.log 2>&1 &
  S=$!
  sleep 5
  python3 - <<'PY'
import json, time, urllib.request
get = lambda p: json.load(urllib.request.urlopen("http://127.0.0.1:9499" + p, timeout=5))
a = get("/api/v1/snapshot"); t0 = time.time()
time.sleep(15)
b = get("/api/v1/snapshot"); t1 = time.time()
print(f"sequence {a['sequence']} -> {b['sequence']} in {t1 - t0:.1f} s; stale {b['stale']}")
print("health", [d["health"] for d in get("/api/v1/devices")["devices"]])
print("sample_duration_us", b.get("sample_duration_us"))
PY
  curl -s http://127.0.0.1:9499/metrics | grep -E "^gpuwatch_(gpu_up|exporter_sampler_hung|exporter_sample_duration_seconds)"
  kill $S; wait $S; echo "serve exit $?"
  tail -5 /tmp/serve.log
} >"$R" 2>&1
cat "$R"
