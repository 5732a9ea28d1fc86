# shellcheck shell=bash
# Sourced by the tests/gpu scripts run through the device tool from the
# repository root with .devtree carried: $OUT (the device tool's, or a local
# folder) exists, .devtree's libraries are found first, and $BIN is its bin/.
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.devtree/lib
# shellcheck disable=SC2034  # read by the scripts that source this
BIN=$PWD/.devtree/bin
