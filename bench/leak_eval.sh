#!/usr/bin/env bash
# The leak evaluation (docs/leaks.md, "Evaluation") in one command: configures
# a release build, builds leak_eval and the fake NVML, runs every case of
# scenarios/leaks/ through the real NvmlBackend (recordings through
# ReplayBackend) with the leak tracker's default options and the seed's
# baseline rule, and prints the Markdown tables and the one-line tally.
#
#   bench/leak_eval.sh                      # the whole set (~20 s of CPU)
#   bench/leak_eval.sh --only leak_urgent,quiet_empty_cache --events
#   bench/leak_eval.sh --strict             # exit 2 when a case misses a target
#
# Environment: BUILD_DIR (default build/leak-eval), JOBS (default 2),
# CMAKE_GENERATOR (default Ninja). Arguments go to leak_eval.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build/leak-eval}"
jobs="${JOBS:-2}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

if ! { cmake -S "$root" -B "$build" -G "${CMAKE_GENERATOR:-Ninja}" -DCMAKE_BUILD_TYPE=Release \
         -DGPUWATCH_BUILD_TESTS=ON &&
       cmake --build "$build" -j "$jobs" --target leak_eval gpuwatch_fake_nvml; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "leak_eval.sh: the build failed (above)" >&2
  exit 1
fi

"$build/tests/analysis/leaks/leak_eval" "$root/scenarios/leaks" "$build/lib/libnvidia-ml-fake.so" "$@"
