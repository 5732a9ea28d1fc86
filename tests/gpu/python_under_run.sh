#!/usr/bin/env bash
# Real-GPU check (issue 6): gpuwatch.torch's TorchMonitor under `gpuwatch run`. The job
# (python_torch_marks.py, 300 steps) sends torch's allocator numbers and a step mark every
# 50 steps over GPUWATCH_SOCKET; run's --json must then hold them: framework_memory for
# CUDA device 0 (torch: allocated, reserved, active, peak_allocated), 6 step marks, the last
# at 300, and the job's NVML peak >= torch's peak reserved.
# Usage: tests/gpu/python_under_run.sh [GPUWATCH_BINARY]  (default: python3 -m gpuwatch,
# the binary installed with the Python package). Prints the summary; exit 1 on a failed check.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -ge 1 ]; then GW=("$1"); else GW=(python3 -m gpuwatch); fi
JSON="$OUT/run_python_marks.json"
rm -f "$JSON"
"${GW[@]}" run --json "$JSON" -- python3 "$ROOT/tests/gpu/python_torch_marks.py" 300
rc=$?
echo "gpuwatch run exit=$rc"
[ "$rc" -eq 0 ] || { echo "FAIL: the job or gpuwatch run failed"; exit 1; }
python3 - "$JSON" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
failures = []
fm = doc.get("framework_memory", {}).get("0")
if fm is None:
    failures.append(f"no framework_memory for device 0: {doc.get('framework_memory')}")
else:
    if fm["framework"] != "torch":
        failures.append(f"framework {fm['framework']!r}")
    for key in ("allocated", "reserved", "active", "peak_allocated"):
        if not fm["peak"].get(key, 0) > 0:
            failures.append(f"framework_memory peak {key} missing or 0: {fm['peak']}")
    if fm["peak"].get("allocated", 0) > fm["peak"].get("reserved", 0):
        failures.append("peak allocated > peak reserved")
    job_peak = max((p["peak_memory_bytes"] for p in doc["processes"]), default=0)
    if job_peak < fm["peak"].get("reserved", 0):
        failures.append(f"NVML's job peak {job_peak} < torch's peak reserved")
if doc.get("steps") != 6:
    failures.append(f"steps {doc.get('steps')}, expected 6 marks (every 50 of 300)")
if doc.get("last_marks", {}).get("step") != "300":
    failures.append(f"last step mark {doc.get('last_marks')}")
print(json.dumps({"framework_memory": doc.get("framework_memory"), "steps": doc.get("steps"),
                  "last_marks": doc.get("last_marks"),
                  "job_processes": doc.get("processes"), "failures": failures}, indent=1))
sys.exit(1 if failures else 0)
PY
