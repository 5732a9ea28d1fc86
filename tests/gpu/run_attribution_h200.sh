#!/usr/bin/env bash
# Process attribution on a real GPU (host/process_resolver.*: `stat` and
# `statm` every sample; the command line, user and cgroup at first sight, on
# an exec and every 10 s), through the device tool, in one call (~3 min), from
# release binaries built here. Carry .devtree (bin/gpuwatch, bin/gpuwatch-full,
# bin/bench/nvml_c_loop, lib/). Writes $OUT/attribution.txt.
#  1. Two torch jobs on the GPU, one of them renamed by an exec after 40 s
#     (python re-executes itself with another script name, then allocates
#     again): the status, and `query --query-compute-apps` beside nvidia-smi's.
#  2. `gpuwatch serve` for 70 s across the exec: /api/v1/processes every 5 s,
#     each job's pid, user, command, host RSS and CPU (the renamed job must
#     show its new command within a sample of its first listing after the
#     exec; RSS must match /proc/PID/status VmRSS).
#  3. `bench/watch_cost.py --real --serve` for 60 s with both jobs running.
set -u
# shellcheck source=tests/gpu/devtree_env.sh
. "$(dirname "$0")/devtree_env.sh"
R=$OUT/attribution.txt
rt=$(mktemp -d)
export GPUWATCH_RUNTIME_DIR=$rt
cat >/tmp/hold.py <<'PY'
# Holds GIB GiB on the GPU and computes for SECONDS; with EXEC_AFTER, re-executes
# itself as /tmp/renamed_job.py after that many seconds (a new command line,
# the same pid), which then holds the memory again.
import os, sys, time, torch
gib, seconds = float(sys.argv[1]), float(sys.argv[2])
x = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(4096, 4096, device="cuda")
start, after = time.time(), float(os.environ.pop("EXEC_AFTER", "0"))
while time.time() - start < seconds:
    a = (a @ a).tanh_()
    torch.cuda.synchronize()
    time.sleep(0.05)
    if after and time.time() - start > after:
        os.execv(sys.executable, [sys.executable, "/tmp/renamed_job.py", str(gib + 1),
                                  str(seconds - after)])
PY
cp /tmp/hold.py /tmp/renamed_job.py
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv
  python3 /tmp/hold.py 3 150 >/tmp/a.log 2>&1 &
  A=$!
  EXEC_AFTER=40 python3 /tmp/hold.py 2 150 >/tmp/b.log 2>&1 &
  B=$!
  echo "jobs: A pid $A (3 GiB), B pid $B (2 GiB, execs into renamed_job.py at 40 s)"
  sleep 15
  echo "== gpuwatch (status), 15 s in"
  "$BIN/gpuwatch" --no-daemon --color never
  echo "== nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory --format=csv"
  nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory --format=csv
  echo "== gpuwatch query --query-compute-apps=pid,process_name,used_gpu_memory --format=csv"
  "$BIN/gpuwatch" query --no-daemon --query-compute-apps=pid,process_name,used_gpu_memory --format=csv
  echo "== gpuwatch serve, /api/v1/processes every 5 s for 70 s (B execs at 40 s)"
  "$BIN/gpuwatch" serve -i 1s --listen 127.0.0.1:19835 >/tmp/serve.log 2>&1 &
  S=$!
  sleep 3
  for i in $(seq 1 14); do
    curl -s 127.0.0.1:19835/api/v1/processes >/tmp/p.json
    python3 - "$A" "$B" <<'PY'
import json, sys, time
want = {int(sys.argv[1]): "A", int(sys.argv[2]): "B"}
procs = json.load(open("/tmp/p.json"))["processes"]
for p in procs:
    if p["pid"] not in want:
        continue
    rss = None
    try:
        rss = next(int(l.split()[1]) * 1024 for l in open(f"/proc/{p['pid']}/status") if l.startswith("VmRSS"))
    except OSError:
        pass
    f = p.get("fields", {})
    print(f"  {time.strftime('%T')} {want[p['pid']]} pid {p['pid']} user {p.get('user')!r} "
          f"name {p.get('name')!r} command {p.get('command')!r} gpu_mem {f.get('used_memory_bytes')} "
          f"rss {f.get('rss_bytes')} (VmRSS now {rss}) cpu {f.get('cpu_ratio')} container "
          f"{p.get('container_runtime')!r}/{p.get('container_id', '')[:12]!r} unavailable {p.get('unavailable')}")
PY
    sleep 5
  done
  kill $S; wait $S 2>/dev/null
  echo "== keys of one process, as served"
  python3 -c 'import json; p=json.load(open("/tmp/p.json"))["processes"]; print(sorted(p[0].keys()), sorted(p[0].get("fields",{}).keys()))'
  echo "== the daemon at 1 Hz beside the C loop, 60 s, both jobs running"
  mkdir -p /tmp/gwb/bench
  cp "$BIN/gpuwatch" "$BIN/gpuwatch-full" /tmp/gwb/ && cp "$BIN/bench/nvml_c_loop" /tmp/gwb/bench/
  python3 bench/watch_cost.py /tmp/gwb 60 --real --serve
  kill $A $B 2>/dev/null
} >"$R" 2>&1
cat "$R"
