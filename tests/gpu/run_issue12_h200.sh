#!/usr/bin/env bash
# Issue 12 on a real GPU, through the device tool, in one call (~8 min):
#  1. four torch jobs share the GPU for 4 min (tests/gpu/leak_jobs.py: two
#     leaking, a cache that warms for 60 s, an empty_cache sawtooth) under a
#     default `gpuwatch watch --jsonl`, the fast leak also under a default
#     `gpuwatch run`;
#  2. gpuwatch.torch.TorchMonitor keeping 8 MiB a step under `gpuwatch run`;
#  3. JAX's default pre-allocation under `gpuwatch run` for 45 s.
# Carry .pydeps (tests/gpu/python_deps.sh) and .devtree (include/sqlite3.h and
# web/: node web/build.mjs --outdir .devtree/web). Everything lands in
# $OUT/issue12.tar.gz, the console lines in $OUT/summary.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=/tmp/issue12
mkdir -p $W
cd "$ROOT"
start_build=$(date +%s)
. tests/gpu/python_install.sh >$W/build.log 2>&1 || { tail -40 $W/build.log; exit 1; }
echo "build+install $(( $(date +%s) - start_build )) s" >$W/summary.txt
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv >>$W/summary.txt
cd "$ROOT/tests/gpu"
export PYTHONUNBUFFERED=1

# 1. Four jobs, default watch; the fast leak under default run as well.
t0=$(date +%s.%N)
$GW watch --jsonl $W/four_jobs.jsonl >$W/watch.txt 2>&1 &
watch_pid=$!
sleep 3
python3 leak_jobs.py --kind cache_warm --seconds 240 >$W/job_cache_warm.txt 2>&1 &
j1=$!
python3 leak_jobs.py --kind sawtooth --seconds 240 >$W/job_sawtooth.txt 2>&1 &
j2=$!
python3 leak_jobs.py --kind leak_late --seconds 240 >$W/job_leak_late.txt 2>&1 &
j3=$!
$GW run --json $W/run_leak_fast.json -- python3 leak_jobs.py --kind leak_fast --seconds 240 \
  >$W/run_leak_fast.txt 2>&1 &
j4=$!
wait $j1 $j2 $j3 $j4
sleep 3
kill -INT $watch_pid; wait $watch_pid
echo "watch started at $t0" >>$W/summary.txt
cat $W/job_*.txt >>$W/summary.txt
grep -E "leak|oom_forecast|diagnosis" $W/watch.txt | head -40 >>$W/summary.txt
grep -A20 "run summary" $W/run_leak_fast.txt >>$W/summary.txt

# 2. TorchMonitor under run.
PYTHONPATH= $GW run --json $W/run_monitor.json --jsonl $W/run_monitor.jsonl -- python3 torch_monitor_leak.py 300 \
  >$W/run_monitor.txt 2>&1
grep -E "leak|steps=" $W/run_monitor.txt >>$W/summary.txt

# 3. JAX's default pre-allocation under run, 45 s.
$GW run --json $W/run_jax.json --jsonl $W/run_jax.jsonl -- python3 jax_prealloc.py 45 >$W/run_jax.txt 2>&1
grep -E "diagnosis|preallocation|leaks|jax" $W/run_jax.txt >>$W/summary.txt
python3 - $W/run_jax.json >>$W/summary.txt <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for e in j["events"]:
    if e["source"] == "preallocation":
        print("preallocation event:", e["message"])
PY
cp $W/summary.txt $OUT/summary.txt
tar czf $OUT/issue12.tar.gz -C $W --exclude build.log . 2>/dev/null
tail -c 3000 $W/build.log >$OUT/build_tail.log
cat $OUT/summary.txt
