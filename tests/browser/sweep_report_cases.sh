#!/usr/bin/env bash
# A sweep's HTML page in a real browser: run `gpuwatch sweep` with the real
# binary on the fake NVML (the demo fleet or scenarios/sweep.yaml, the shipped
# gpuwatch-demo-trainer as the job), write the page, and open it in headless
# Chromium (check_sweep_report.mjs).
#   sweep_report_cases.sh CASE BUILD_DIR ARTIFACT_DIR
# CASE: search (--demo --search --report) | bisect (--demo --bisect --report) |
# concurrency (--demo --concurrency --json, then `gpuwatch report SWEEP.json`) | nofit (every value runs out of
# memory on scenarios/sweep.yaml). The screenshot and page stay in ARTIFACT_DIR.
set -euo pipefail
case_name=$1
build=$2
artifacts=$3
here=$(cd "$(dirname "$0")" && pwd)
gpuwatch=$build/gpuwatch
trainer=$build/gpuwatch-demo-trainer
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset GPUWATCH_FAKE_TIME
export GPUWATCH_RUNTIME_DIR=$work/runtime
page=$work/sweep.html
expect=()

case $case_name in
  search)
    "$gpuwatch" sweep --demo --search --steps 5 -q --report "$page" -- "$trainer" --batch {bs}
    ;;
  bisect)
    "$gpuwatch" sweep --demo --bisect --steps 5 -q --report "$page" -- "$trainer" --batch {bs}
    ;;
  concurrency)
    "$gpuwatch" sweep --demo --values 200 --concurrency 1,2,3,4 --steps 20 -q \
      --json "$work/sweep.json" -- "$trainer" --batch {bs} --saturate 2 >/dev/null
    "$gpuwatch" report "$work/sweep.json" -o "$page"
    ;;
  nofit)
    # It stops at --max-trials with exit status 1; the page is written all the same.
    status=0
    "$gpuwatch" sweep --scenario "$here/../../scenarios/sweep.yaml" --search --values 40000 \
      --max-trials 3 --steps 5 -q --report "$page" -- "$trainer" --batch {bs} >/dev/null ||
      status=$?
    if [ "$status" -ne 1 ]; then
      echo "sweep_report_cases.sh: the sweep exited $status, not 1 (stopped at --max-trials)" >&2
      exit 1
    fi
    expect=(--expect-no-fit)
    ;;
  *)
    echo "sweep_report_cases.sh: unknown case $case_name" >&2
    exit 2
    ;;
esac
node "$here/check_sweep_report.mjs" "$page" "${expect[@]}" \
  --screenshot "$artifacts/sweep-$case_name.png"
cp "$page" "$artifacts/sweep-$case_name.html"
