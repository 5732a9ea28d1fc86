#!/usr/bin/env bash
# Issue 19's checks on however many GPUs this machine has (N = nvidia-smi -L),
# through the device tool, in one call (~7 min on one GPU). Carry .pydeps
# (tests/gpu/python_deps.sh) and .devtree (include/sqlite3.h and web/: node
# web/build.mjs --outdir .devtree/web), as for run_issue12_h200.sh.
#  1. `gpuwatch query` against `nvidia-smi --query-gpu` for every GPU, cell by
#     cell (docs/real-gpu.md's fields), and --query-compute-apps while 3 runs;
#  3. a torchrun DDP job (tests/gpu/ddp_job.py, NCCL) with one rank a GPU under
#     a default `gpuwatch run`, every rank reporting its allocator's memory
#     over GPUWATCH_SOCKET and the last rank keeping 16 MiB a step; then the
#     same with two ranks a GPU (gloo: NCCL refuses two ranks on one GPU), so
#     that even one GPU shows a leak filed under one rank's pid and not the
#     other's;
#  4. N/2 + 2 concurrent `run --gpus auto:K --wait` jobs (K = 2, or 1 on one
#     GPU), each holding its GPUs for 8 s: no GPU given twice, queue order kept.
# Item 2 (cost per GPU) is bench/side_by_side.py's, item 5 run_top_h200.sh's;
# item 6 needs two GPUs. Everything lands in $OUT/issue19.tar.gz, the console
# lines in $OUT/summary.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=/tmp/issue19
rm -rf $W && mkdir -p $W
cd "$ROOT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start_build=$(date +%s)
. tests/gpu/python_install.sh >$W/build.log 2>&1 || { tail -40 $W/build.log; cp $W/build.log $OUT/; exit 1; }
N=$(nvidia-smi -L | grep -c '^GPU ')
S=$W/summary.txt
{
  echo "build+install $(( $(date +%s) - start_build )) s; $N GPU(s)"
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,memory.used,memory.total,driver_version --format=csv
} >$S
export PYTHONUNBUFFERED=1

# 1. Every GPU, field by field.
FIELDS=$(grep '^FIELDS=' tests/gpu/run_on_h200.sh | cut -d'"' -f2)
nvidia-smi --query-gpu=$FIELDS --format=csv >$W/smi.csv
$GW query --query-gpu=$FIELDS --format=csv >$W/gw.csv
$GW query --query-gpu=index,uuid --format=csv,noheader >$W/uuids.csv
{ echo; echo "== 1. query against nvidia-smi, $(echo $FIELDS | tr ',' '\n' | wc -l) fields x $N GPU(s)"
  python3 tests/gpu/compare_query.py $W/smi.csv $W/gw.csv | tail -3; } >>$S

# 3. DDP under run: one rank a GPU (NCCL), then two ranks a GPU (gloo).
ddp() {  # NAME RANKS_PER_NODE
  local name=$1 ranks=$2
  $GW run --json $W/$name.json --jsonl $W/$name.jsonl -- \
    python3 -m torch.distributed.run --standalone --nproc_per_node=$ranks tests/gpu/ddp_job.py --steps 360 \
      --leak-rank $((ranks - 1)) >$W/$name.txt 2>&1 &
  local job=$!
  # --query-compute-apps while it runs (45 s in), both tools one after the other.
  sleep 45
  A=gpu_bus_id,gpu_uuid,pid,process_name,used_gpu_memory
  nvidia-smi --query-compute-apps=$A --format=csv,noheader >$W/$name.smi_apps.csv
  $GW query --query-compute-apps=$A --format=csv,noheader >$W/$name.gw_apps.csv
  wait $job
  echo "exit $?" >>$W/$name.txt
  { echo; echo "== 3. $name: torchrun --nproc_per_node=$ranks, leak on rank $((ranks - 1))"
    grep -E "^rank |^exit " $W/$name.txt
    echo "-- nvidia-smi --query-compute-apps"; cat $W/$name.smi_apps.csv
    echo "-- gpuwatch query --query-compute-apps"; cat $W/$name.gw_apps.csv
    python3 tests/gpu/ddp_summary.py $W/$name.json $W/$name.txt $W/uuids.csv $((ranks - 1))
    grep -A30 "run summary" $W/$name.txt | head -40; } >>$S
}
ddp ddp_nccl $N
ddp ddp_two_per_gpu $((2 * N))

# 4. Concurrent queued jobs.
K=$(( N >= 2 ? 2 : 1 ))
JOBS=$(( N / 2 + 2 ))
for i in $(seq 1 $JOBS); do
  $GW run --gpus auto:$K --wait 10m --json $W/queue_$i.json -- \
    sh -c 'echo "job '$i' CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES start $(date +%s.%N)"; sleep 8; echo "job '$i' end $(date +%s.%N)"' \
    >$W/queue_$i.txt 2>&1 &
  sleep 0.5
done
wait
{ echo; echo "== 4. $JOBS concurrent run --gpus auto:$K --wait"
  python3 tests/gpu/queue_summary.py $(for i in $(seq 1 $JOBS); do echo $W/queue_$i.txt; done); } >>$S

cp $S $OUT/summary.txt
tar czf $OUT/issue19.tar.gz -C $W --exclude build.log . 2>/dev/null
tail -c 3000 $W/build.log >$OUT/build_tail.log
cat $OUT/summary.txt
