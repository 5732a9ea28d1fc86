#!/usr/bin/env bash
# Every test: installs what it needs, then builds and runs
#   1. the whole suite with GCC, warnings as errors (unit, fake-NVML backend,
#      CLI golden tests, browsers, a real Prometheus),
#   2. the suite again built by clang, warnings as errors, under ASan+UBSan
#      (one build checks both the second compiler and the sanitizers),
#   3. the threaded parts' tests (sampler, server, store, job socket, actions, top's feeds)
#      under ThreadSanitizer, the parsers under libFuzzer, a clang-format check;
#   and the Python package: pip install ./python, then pytest.
# The real-Prometheus test (2.5 min: it waits for a leak verdict), the attack
# suite (it bounds the daemon's memory, which a sanitizer multiplies) and the
# checks of files (docs, deploy, packaging) run in the GCC stage only; the
# sanitizer stage runs everything else (the list: gcc_only below).
# Every build is a unity build (CMakePresets.json: GCC and the release 8
# files a batch, clang 5, TSan 6, fuzz 8), so each file meets different
# neighbours in GCC's, clang's and TSan's builds: one that leans on a
# batch-mate's #include is likely to fail in one of them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)}
failed=0

# Each stage says when it starts, how long the suite has run and how much disk
# is free, for the CI log.
started=$SECONDS
free_gib() { df -Pk build | awk 'NR == 2 { print int($4 / 1048576) }'; }
step() { echo; echo "=== $* (at $(date +%T), $(((SECONDS - started) / 60)) min in, $(free_gib) GiB free)"; }
# A stage's build tree takes 1 to 3 GiB, and a CI machine may have little more
# than one stage's room: when less than GPUWATCH_MIN_FREE_GIB (default 8) is
# free before a stage builds, the trees of the stages already done go (what they
# found is in this log above). Where there is room, every tree stays.
make_room() {
  local free
  free=$(free_gib)
  if [ "$free" -lt "${GPUWATCH_MIN_FREE_GIB:-8}" ]; then
    echo "only $free GiB free: removing the finished stages' build trees ($*)"
    rm -rf "$@"
    echo "now $(free_gib) GiB free"
  fi
}
mkdir -p build

step "GCC build, warnings as errors"
cmake --preset gcc >/dev/null
cmake --build --preset gcc -j "$JOBS"
step "GCC tests"
ctest --preset gcc -j "$JOBS" || failed=1

step "Python package: pip install ./python (CMake, reusing the GCC build) and pytest"
# Debian's python3, whose packages (pybind11, pytest, CPU torch) the venv sees.
venv=build/python-venv
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
if GPUWATCH_CMAKE_BUILD_DIR=build/gcc CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
     "$venv/bin/pip" install -q --no-build-isolation ./python; then
  (cd python/tests && "../../$venv/bin/python" -m pytest -q -p no:cacheprovider) || failed=1
else
  echo "pip install ./python: FAILED"
  failed=1
fi

# Run by the GCC stage alone: the real Prometheus and the attack suite, and
# the leak evaluation's replays of two-hour recordings (LeakScenario.*,
# LeakLabels.*, LeakBaseline.*: the same detector code, which its unit tests
# run under the sanitizers; they are half of what the sanitized suite costs);
# and what checks files rather than memory: every output quoted in the docs
# (3 min under GCC), the deploy files, the web bundle's packaging and the
# shell completions, whose commands the other tests run under the sanitizers;
# and the two dashboard sessions in Chromium (each runs alone, 1.5 min under
# ASan: the page is the same JavaScript in both builds, and the server's
# routes and stream they use run under the sanitizers in server_test).
gcc_only='^(prometheus_test|attack_suite_test|Leak(Scenario|Baseline)\..*|EveryCase/LeakLabels\..*|docs_outputs|deploy_files_test|web_bundle_without_node|completion_shells_test|dashboard_browser_(demo|fleet))$'

step "clang build (warnings as errors) under ASan+UBSan, and tests"
make_room build/gcc build/python-venv
cmake --preset asan >/dev/null
if cmake --build --preset asan -j "$JOBS"; then
  ctest --preset asan -j "$JOBS" -E "$gcc_only" || failed=1
else
  failed=1
fi

step "ThreadSanitizer: the threaded parts' tests"
tsan_tests="sampler/sampler_test server/server_test store/store_test transport/transport_test
            alerts/actions_test tui/tui_test"
make_room build/gcc build/python-venv build/asan
cmake --preset tsan >/dev/null
if cmake --build --preset tsan -j "$JOBS" --target gpuwatch_fake_nvml \
     $(for t in $tsan_tests; do basename "$t"; done); then
  for t in $tsan_tests; do
    if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "build/tsan/tests/$t" \
         --gtest_brief=1 >"build/tsan/$(basename "$t").log" 2>&1; then
      echo "$(basename "$t"): no race, all passed"
    else
      tail -40 "build/tsan/$(basename "$t").log"
      echo "$(basename "$t"): FAILED under ThreadSanitizer (log build/tsan/$(basename "$t").log)"
      failed=1
    fi
  done
else
  failed=1
fi

step "fuzzing every parser (bounded: 30 s or 200000 inputs each, $JOBS at a time)"
fuzzers="smi_query_fuzzer proc_fuzzer scenario_fuzzer rules_fuzzer lease_fuzzer http_fuzzer documents_fuzzer"
# One fuzzer on a fresh copy of its corpus; its verdict goes to build/fuzz/NAME.result.
fuzz_one() {
  local f=$1 corpus
  corpus=$(mktemp -d)
  cp tests/fuzz/corpus/$f/* "$corpus"/
  if build/fuzz/tests/fuzz/$f -runs=200000 -max_total_time=30 -artifact_prefix=build/fuzz/ "$corpus" \
       >build/fuzz/$f.log 2>&1; then
    echo "$f: $(grep -c . "$corpus"/* | wc -l) corpus inputs, no crash" >build/fuzz/$f.result
  else
    { tail -30 build/fuzz/$f.log
      echo "$f: FAILED (crash input in build/fuzz, log build/fuzz/$f.log)"; } >build/fuzz/$f.result
  fi
  rm -rf "$corpus"
}
make_room build/gcc build/python-venv build/asan build/tsan
cmake --preset fuzz >/dev/null
if cmake --build --preset fuzz -j "$JOBS" --target $fuzzers; then
  running=0
  for f in $fuzzers; do
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    rm -f build/fuzz/$f.result
    fuzz_one "$f" &
    running=$((running + 1))
  done
  wait
  for f in $fuzzers; do
    cat build/fuzz/$f.result 2>/dev/null || echo "$f: FAILED (no result)"
    grep -q ", no crash$" build/fuzz/$f.result 2>/dev/null || failed=1
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
echo "=== done in $(((SECONDS - started) / 60)) min"
if [ "$failed" -ne 0 ]; then
  echo "gpuwatch tests: FAILED"
  exit 1
fi
echo "gpuwatch tests: all passed"
