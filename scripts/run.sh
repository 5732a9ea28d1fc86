#!/usr/bin/env bash
# The main job: set up, build, and show every GPU and process on this machine;
# where no NVIDIA driver exists, the labelled demo fleet instead.
# (Until `gpuwatch serve` exists, this is the status view.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target gpuwatch gpuwatch_fake_nvml
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1' || [ -n "${GPUWATCH_NVML_LIBRARY:-}" ]; then
  exec build/release/gpuwatch "$@"
fi
echo "gpuwatch: no NVIDIA driver on this machine: showing the DEMO fleet (simulated GPUs)."
exec build/release/gpuwatch --demo "$@"
