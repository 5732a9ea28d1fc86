#!/usr/bin/env bash
# The live dashboard in a real browser against a real `gpuwatch serve` on a
# generated fleet of 8 GPUs and 105 processes (the size the dashboard must
# stay smooth at), with a job reporting torch memory over --socket: the
# browser check passes (cards, charts, table, smoothness) and GPU 0's card
# shows the framework memory the job sent. GPU 7's temperature read never
# returns (a hung driver call): its card says STALE while the others go on.
#   dashboard_fleet_case.sh BUILD_DIR ARTIFACT_DIR PORT
set -euo pipefail
source "$(dirname "$0")/case_lib.sh"
case_setup "$@"
{
  echo "clock: wall"
  echo "period: 1h"
  echo "devices:"
  for g in $(seq 0 7); do
    echo "  - name: NVIDIA H200"
    echo "    utilization_gpu: {constant: 70, noise: 10}"
    echo "    processes:"
    [ "$g" = 0 ] && echo "      - {pid_file: $work/job.pid, memory: 20GiB, sm_util: 40}"
    for p in $(seq 1 13); do
      echo "      - {pid: $((300000 + g * 100 + p)), memory: {constant: $((1 + p % 4))GiB, noise: 50MiB}, sm_util: {constant: 3, noise: 2}}"
    done
  done
  echo "faults:"
  echo "  - hang: {call: nvmlDeviceGetTemperature}"
  echo "    device: 7"
} >"$work/fleet.yaml"
"$build/gpuwatch" --scenario "$work/fleet.yaml" serve --listen "127.0.0.1:$port" -i 1s \
  --socket "$work/gpuwatch.sock" >"$work/serve.log" 2>&1 &
server=$!
job=
trap 'kill $server $job 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
wait_for "http://127.0.0.1:$port/readyz" || true  # the socket is made before the listener
# The job: lists itself on GPU 0 (pid_file) and reports torch memory every second.
python3 - "$work/gpuwatch.sock" "$work/job.pid" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
open(sys.argv[2], "w").write(str(os.getpid()))
s.sendall(b"hello framework=torch version=2.11.0\n")
for step in range(600):
    s.sendall(f"mem framework=torch device=0 allocated={8 << 30} reserved={12 << 30}\n".encode())
    if step % 5 == 0:
        s.sendall(f"mark step={step}\n".encode())
    time.sleep(1)
PY
job=$!
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$port/api/v1/snapshot" | grep '"framework":"torch"' >/dev/null && break
  sleep 0.5
done
node "$here/check_dashboard.mjs" "http://127.0.0.1:$port/" --expect-framework --expect-stale 7 --seconds 10 \
  --screenshot "$artifacts/dashboard-fleet.png"
