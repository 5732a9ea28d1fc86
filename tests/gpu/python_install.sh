#!/usr/bin/env bash
# On the GPU machine: `pip install ./python` with its python3, CMake finding
# gpuwatch's C++ dependencies in .pydeps (python_deps.sh), the web bundle in
# .devtree/web and sqlite3.h in .devtree/include when they were carried (no
# node or SQLite headers there). Source it from the repository root: it
# exports LD_LIBRARY_PATH for the libraries the module links, and GW, the
# gpuwatch binary the build left in GPUWATCH_CMAKE_BUILD_DIR (default /tmp/gwb).
P=$PWD/.pydeps/root/usr
export LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GPUWATCH_CMAKE_BUILD_DIR=${GPUWATCH_CMAKE_BUILD_DIR:-/tmp/gwb}
# No ncursesw development files there (top's): its headers from .pydeps.
if ! pkg-config --exists ncursesw 2>/dev/null; then
  mkdir -p "$P/lib/pkgconfig"
  printf '%s\n' "Name: ncursesw" "Description: ncursesw from .pydeps" "Version: 6.4" \
    "Libs: -L$P/lib/x86_64-linux-gnu -lncursesw -ltinfo" \
    "Cflags: -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600 -I$P/include" >"$P/lib/pkgconfig/ncursesw.pc"
  export PKG_CONFIG_PATH=$P/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
fi
args="-DCMAKE_PREFIX_PATH=$P"
[ -d .devtree/web ] && args="$args -DGPUWATCH_WEB_DIST=$PWD/.devtree/web"
[ -d .devtree/include ] && args="$args -DSQLite3_INCLUDE_DIR=$PWD/.devtree/include"
export GW=$GPUWATCH_CMAKE_BUILD_DIR/gpuwatch
GPUWATCH_CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  python3 -m pip install -q --no-build-isolation --no-deps ./python
