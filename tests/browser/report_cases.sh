#!/usr/bin/env bash
# End-to-end report checks in a real browser: make a recording or run a job
# with the real gpuwatch binary on the fake NVML, write the HTML report, and
# open it in headless Chromium (check_report.mjs).
#   report_cases.sh CASE BUILD_DIR ARTIFACT_DIR
# CASE: jsonl | db | run. The screenshot stays in ARTIFACT_DIR.
set -euo pipefail
case_name=$1
build=$2
artifacts=$3
here=$(cd "$(dirname "$0")" && pwd)
gpuwatch=$build/gpuwatch
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset GPUWATCH_FAKE_TIME

case $case_name in
  jsonl | db)
    flag=--$case_name
    recording=$work/recording.$case_name
    "$gpuwatch" --demo watch -i 100ms --duration 4s --quiet "$flag" "$recording"
    "$gpuwatch" report "$recording" -o "$work/report.html"
    ;;
  run)
    # The fake NVML binds its one scripted process to the job's pid.
    cat >"$work/job.yaml" <<YAML
clock: init
devices:
  - name: NVIDIA H200
    utilization_gpu: 60
    processes:
      - {pid_file: $work/child.pid, memory: 10GiB, sm_util: 60}
  - name: NVIDIA H200
YAML
    PATH=$build/tests/transport:$PATH "$gpuwatch" run --scenario "$work/job.yaml" -i 50ms \
      --report "$work/report.html" -- sh -c "echo \$\$ > $work/child.pid;
        job_client 'hello framework=torch version=2.11' 'mark epoch=1' 'mark step=1' \
          'mem framework=torch device=0 allocated=4000000000 reserved=6000000000' sleep=1500 \
          'mark step=2' 'mem framework=torch device=0 allocated=5000000000 reserved=7000000000' \
          'mark phase=eval'; sleep 1"
    ;;
  *)
    echo "report_cases.sh: unknown case $case_name" >&2
    exit 2
    ;;
esac
node "$here/check_report.mjs" "$work/report.html" --screenshot "$artifacts/report-$case_name.png"
cp "$work/report.html" "$artifacts/report-$case_name.html"
