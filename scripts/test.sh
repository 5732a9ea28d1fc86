#!/usr/bin/env bash
# Every test: installs what it needs, then builds and runs
#   1. the whole suite with GCC (unit, fake-NVML backend, CLI golden tests),
#   2. the unit tests again under ASan+UBSan,
#   3. a clang build with warnings as errors, and a clang-format check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)}
failed=0

step() { echo; echo "=== $*"; }

step "GCC build, warnings as errors"
cmake -S . -B build/gcc -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGPUWATCH_WERROR=ON >/dev/null
cmake --build build/gcc -j "$JOBS"
step "GCC tests"
(cd build/gcc && ctest --output-on-failure -j "$JOBS") || failed=1

step "ASan+UBSan build and tests"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGPUWATCH_SANITIZE=ON >/dev/null
cmake --build build/asan -j "$JOBS"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j "$JOBS") || failed=1

step "clang build (warnings as errors) and tests"
CXX=clang++ CC=clang cmake -S . -B build/clang -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DGPUWATCH_WERROR=ON -DGPUWATCH_BUILD_TESTS=ON >/dev/null
if cmake --build build/clang -j "$JOBS"; then
  (cd build/clang && ctest --output-on-failure -j "$JOBS") || failed=1
else
  failed=1
fi

step "fuzzing every parser (bounded: 30 s or 200000 inputs each)"
CXX=clang++ CC=clang cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DGPUWATCH_BUILD_FUZZERS=ON -DGPUWATCH_SANITIZE=ON -DGPUWATCH_BUILD_TESTS=OFF >/dev/null
if cmake --build build/fuzz -j "$JOBS" --target smi_query_fuzzer proc_fuzzer scenario_fuzzer rules_fuzzer; then
  for f in smi_query_fuzzer proc_fuzzer scenario_fuzzer rules_fuzzer; do
    corpus=$(mktemp -d)
    cp tests/fuzz/corpus/$f/* "$corpus"/
    if build/fuzz/tests/fuzz/$f -runs=200000 -max_total_time=30 -artifact_prefix=build/fuzz/ "$corpus" \
         >build/fuzz/$f.log 2>&1; then
      echo "$f: $(grep -c . "$corpus"/* | wc -l) corpus inputs, no crash"
    else
      tail -30 build/fuzz/$f.log
      echo "$f: FAILED (crash input in build/fuzz, log build/fuzz/$f.log)"
      failed=1
    fi
    rm -rf "$corpus"
  done
else
  failed=1
fi

step "clang-format"
if ! git ls-files '*.h' '*.cc' | xargs clang-format --dry-run -Werror >build/clang-format.log 2>&1; then
  grep 'error:' build/clang-format.log | head -20
  echo "clang-format: files to reformat (run: git ls-files '*.h' '*.cc' | xargs clang-format -i)"
  failed=1
else
  echo "clang-format: clean"
fi

echo
if [ "$failed" -ne 0 ]; then
  echo "gpuwatch tests: FAILED"
  exit 1
fi
echo "gpuwatch tests: all passed"
