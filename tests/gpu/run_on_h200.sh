#!/usr/bin/env bash
# Real-GPU verification and benchmarks for the spine (issue 2), run on the H200
# machine through the device tool: builds gpuwatch there, compares it with
# nvidia-smi while a torch process holds 4 GiB, and times the benchmarks.
# Writes to $OUT: build.log, compare.txt, status.txt, bench.txt.
set -u
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/gw-build
{
  cmake -S "$ROOT" -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUWATCH_BUILD_TESTS=OFF -DGPUWATCH_BUILD_BENCH=ON -DGPUWATCH_BUILD_FAKE_NVML=OFF &&
  cmake --build $B -j16
} >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
GW=$B/gpuwatch

FIELDS="index,uuid,name,serial,driver_version,pci.bus_id,pstate,temperature.gpu,temperature.memory,utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,memory.reserved,power.draw,power.draw.instant,power.draw.average,power.limit,enforced.power.limit,power.default_limit,power.min_limit,power.max_limit,clocks.sm,clocks.mem,clocks.gr,clocks.max.sm,clocks.max.memory,clocks.max.graphics,fan.speed,display_mode,display_active,compute_mode,persistence_mode,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.aggregate.total,ecc.errors.corrected.aggregate.total,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,pcie.link.gen.max,pcie.link.gen.current,pcie.link.width.max,pcie.link.width.current,mig.mode.current,compute_cap,vbios_version,clocks_event_reasons.active,clocks_event_reasons.supported,utilization.encoder,utilization.decoder,count,timestamp"

# A torch process holding 4 GiB, as a training job would.
python3 -c "
import torch, time
x = torch.empty(4 * 2**30, dtype=torch.uint8, device='cuda'); x.fill_(1); torch.cuda.synchronize()
print('holding', flush=True); time.sleep(300)" >/tmp/holder.log 2>&1 &
HOLDER=$!
for i in $(seq 60); do grep -q holding /tmp/holder.log && break; sleep 1; done

{
  echo "== nvidia-smi --version"; nvidia-smi --version
  echo; echo "== --query-gpu, $(echo $FIELDS | tr ',' '\n' | wc -l) fields, --format=csv"
  nvidia-smi --query-gpu=$FIELDS --format=csv >/tmp/smi.csv; $GW query --query-gpu=$FIELDS --format=csv >/tmp/gw.csv
  echo "-- nvidia-smi"; cat /tmp/smi.csv; echo "-- gpuwatch"; cat /tmp/gw.csv
  echo "-- field by field"; python3 "$ROOT/tests/gpu/compare_query.py" /tmp/smi.csv /tmp/gw.csv
  echo; echo "== noheader,nounits"
  nvidia-smi --query-gpu=$FIELDS --format=csv,noheader,nounits; $GW query --query-gpu=$FIELDS --format=csv,noheader,nounits
  echo; echo "== aliases (gpu_name,gpu_uuid,gpu_bus_id,clocks.sm,clocks.gr,clocks.mem,gpu_serial)"
  nvidia-smi --query-gpu=gpu_name,gpu_uuid,gpu_bus_id,clocks.sm,clocks.gr,clocks.mem,gpu_serial --format=csv
  $GW query --query-gpu=gpu_name,gpu_uuid,gpu_bus_id,clocks.sm,clocks.gr,clocks.mem,gpu_serial --format=csv
  echo; echo "== --query-compute-apps (torch holding 4 GiB)"
  A=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory
  nvidia-smi --query-compute-apps=$A --format=csv; $GW query --query-compute-apps=$A --format=csv
  nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv,noheader,nounits
  $GW query --query-compute-apps=pid,name,used_memory --format=csv,noheader,nounits
  echo; echo "== bad input"
  nvidia-smi --query-gpu=index,bogus_field --format=csv; echo "exit=$?"
  $GW query --query-gpu=index,bogus_field --format=csv; echo "exit=$?"
  nvidia-smi --query-gpu=index --format=csv,bogus; echo "exit=$?"
  $GW query --query-gpu=index --format=csv,bogus; echo "exit=$?"
  echo; echo "== -lms 200 for ~1 s"
  timeout 1.1 nvidia-smi --query-gpu=index,utilization.gpu --format=csv -lms 200
  timeout 1.1 $GW query --query-gpu=index,utilization.gpu --format=csv -lms 200
} >"$OUT/compare.txt" 2>&1

{
  echo "== gpuwatch"; $GW --color=never
  echo "== gpuwatch --json"; $GW --json
  echo "== gpuwatch doctor"; $GW doctor --color=never; echo "exit=$?"
  echo "== nvidia-smi"; nvidia-smi
} >"$OUT/status.txt" 2>&1

{
  echo "== per full device sample (device 0), 3 rounds, 2000 iterations each"
  for r in 1 2 3; do
    $B/bench/sample_bench 2000; $B/bench/nvml_c_loop 2000; $B/bench/nvml_c_loop 2000 all
    python3 "$ROOT/bench/pynvml_bench.py" 2000
  done
  echo; echo "== query wall time, median of 25 alternating runs"
  python3 "$ROOT/tests/gpu/time_query.py" $GW 25
  echo; echo "== where a one-shot query's time goes (bench/query_phases, 10 fresh processes)"
  for i in $(seq 10); do $B/bench/query_phases; done
  for i in $(seq 3); do $B/bench/query_phases probes; done
  echo; echo "== machine"; nproc; uname -r; nvidia-smi -L
} >"$OUT/bench.txt" 2>&1

kill $HOLDER 2>/dev/null
cat "$OUT/bench.txt"; grep -E "mismatch|HEADER" "$OUT/compare.txt"
