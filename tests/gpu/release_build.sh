# Sourced by the GPU scripts that build on the GPU machine: release_build DIR
# LOG TARGET... configures a release build of this checkout in DIR (no tests,
# no fake NVML, the benchmarks on) and builds TARGETs, the log in LOG; on a
# failure it prints the log's tail and returns 1. The web pages are the kept
# bundle web/bundle/ (no npm there). Carry .devtree with include/sqlite3.h
# (the machine has only the .so): mkdir -p .devtree/include && cp
# /usr/include/sqlite3.h .devtree/include/.
release_build() {
  local dir=$1 log=$2 root sqlite_lib
  shift 2
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  sqlite_lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 2>/dev/null | head -1)
  {
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUWATCH_BUILD_TESTS=OFF \
      -DGPUWATCH_BUILD_FAKE_NVML=OFF -DGPUWATCH_BUILD_BENCH=ON \
      -DSQLite3_INCLUDE_DIR="$root/.devtree/include" -DSQLite3_LIBRARY="$sqlite_lib" &&
      cmake --build "$dir" -j"$(nproc)" --target "$@"
  } >"$log" 2>&1 || { tail -40 "$log"; return 1; }
}
