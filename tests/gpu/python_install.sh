#!/usr/bin/env bash
# On the GPU machine: `pip install ./python` with its python3, CMake finding
# gpuwatch's C++ dependencies in .pydeps (python_deps.sh). Source it: it
# exports LD_LIBRARY_PATH for the libraries the module links.
P=$PWD/.pydeps/root/usr
export LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GPUWATCH_CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$P" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  python3 -m pip install -q --no-build-isolation --no-deps ./python
