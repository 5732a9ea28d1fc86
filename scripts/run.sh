#!/usr/bin/env bash
# The main job: set up, build, and run the daemon — dashboard, /metrics and
# the JSON API on http://127.0.0.1:9835/ — on this machine's GPUs, or on the
# labelled DEMO fleet where no NVIDIA driver exists. Extra arguments go to
# `gpuwatch serve` (e.g. --listen 0.0.0.0:9835, --db history.db).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target gpuwatch gpuwatch_fake_nvml
# The real GPUs when NVML answers (wherever the driver put libnvidia-ml), else the demo.
source=()
if build/release/gpuwatch --no-processes >/dev/null 2>&1; then
  build/release/gpuwatch
else
  echo "gpuwatch: no usable NVIDIA driver here (\`build/release/gpuwatch doctor\` says why):"
  echo "          serving the DEMO fleet (simulated GPUs)."
  source=(--demo)
fi
exec build/release/gpuwatch "${source[@]}" serve "$@"
