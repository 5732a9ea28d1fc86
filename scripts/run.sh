#!/usr/bin/env bash
# The main job: set up, build, and show every GPU and process on this machine;
# where no NVIDIA driver exists, the labelled demo fleet instead.
# (Until `gpuwatch serve` exists, this is the status view.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target gpuwatch gpuwatch_fake_nvml
# The real GPUs when NVML answers (wherever the driver put libnvidia-ml), else the demo.
if build/release/gpuwatch --no-processes >/dev/null 2>&1; then
  exec build/release/gpuwatch "$@"
fi
echo "gpuwatch: no usable NVIDIA driver here (\`build/release/gpuwatch doctor\` says why):"
echo "          showing the DEMO fleet (simulated GPUs)."
exec build/release/gpuwatch --demo "$@"
