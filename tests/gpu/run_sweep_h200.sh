#!/usr/bin/env bash
# `gpuwatch sweep` on the H200 (issue 16), through the device tool; carry .devtree
# (bin/gpuwatch built here in release, lib/ with the libraries the GPU machine lacks), made by:
#   cmake -S . -B /tmp/gw-h2build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUWATCH_BUILD_TESTS=OFF
#   cmake --build /tmp/gw-h2build --target gpuwatch
#   mkdir -p .devtree/bin .devtree/lib && cp /tmp/gw-h2build/gpuwatch .devtree/bin/
#   for l in libbrotlicommon.so.1 libbrotlidec.so.1 libbrotlienc.so.1 libcpp-httplib.so.0.11 \
#            libfmt.so.9 libyaml-cpp.so.0.7 libncursesw.so.6 libtinfo.so.6; do
#     cp -L /lib/x86_64-linux-gnu/$l .devtree/lib/; done
# (not libstdc++, libssl or libz: the machine's own are newer, and its python3 loads them too).
#  1. `sweep --search` on ResNet-50 and on a GPT-2-size decoder (tests/gpu/sweep_models.py),
#     each from the default 4 small runs (8, 16 and two the fit places); the table, the JSON and the wall
#     time of each into $OUT.
#  1b. (PART=compare) the same `sweep --search` then `sweep --bisect` (doubling from 8 and
#     bisection, no fit: Lightning's BatchSizeFinder) of each model, one after the other on the
#     same GPU, so their trials and wall times compare.
#  2. `sweep --concurrency 1,2,3,4` of a small MLP.
#  3. A torch training loop and JAX's pre-allocation under `gpuwatch run` (the summaries
#     docs/real-gpu.md records).
# PART=search runs 1 only, PART=compare 1b only, PART=conc 2 only, PART=rest 2 and 3; all by default (about 8
# minutes); MODELS picks the models of 1. CONC_BATCH is the MLP's batch for 2 (4096: it fills the GPU alone).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.devtree/lib
export GPUWATCH_RUNTIME_DIR=$(mktemp -d)
OUT=${OUT:-/tmp/gpuwatch-out}
mkdir -p "$OUT"
GW=$PWD/.devtree/bin/gpuwatch
PART=${PART:-all}
{ nvidia-smi -L; $GW --version; python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'; } \
  > "$OUT/versions-$PART.txt" 2>&1
timed() {  # NAME CMD...: the command's stdout and stderr to $OUT/NAME.txt, its wall time after
  local name=$1; shift
  local t0=$(date +%s%N)
  timeout ${LIMIT:-240} "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  echo "exit $rc, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/$name.txt"
  tail -6 "$OUT/$name.txt"
}
if [ "$PART" = all ] || [ "$PART" = search ]; then
  for model in ${MODELS:-resnet50 gpt2}; do
    timed sweep-$model $GW sweep --search --steps 5 --seconds 60 --json "$OUT/sweep-$model.json" \
      --report "$OUT/sweep-$model.html" \
      -- python3 tests/gpu/sweep_models.py $model --batch {bs}
  done
fi
if [ "$PART" = compare ]; then
  for model in ${MODELS:-resnet50 gpt2}; do
    for how in search bisect; do
      LIMIT=450 timed $how-$model $GW sweep --$how --steps 5 --seconds 60 \
        --json "$OUT/$how-$model.json" -- python3 tests/gpu/sweep_models.py $model --batch {bs}
    done
  done
fi
CONC_BATCH=${CONC_BATCH:-4096}
if [ "$PART" != search ] && [ "$PART" != compare ]; then
  timed sweep-mlp$CONC_BATCH-concurrency $GW sweep --values $CONC_BATCH --concurrency 1,2,3,4 \
    --steps 0 --seconds 20 -- python3 tests/gpu/sweep_models.py mlp --batch {bs}
fi
if [ "$PART" = all ] || [ "$PART" = rest ]; then
  cd tests/gpu
  timed run-torch $GW run --json "$OUT/run_torch.json" -- python3 train_loop.py --steps 600 --hold-gib 4
  timed run-jax $GW run --interval 500ms --json "$OUT/run_jax.json" -- python3 jax_prealloc.py 25
fi
# The device tool returns a few files: one archive of them all.
tar czf /tmp/sweep_h200-$PART.tgz -C "$OUT" . && rm -f "$OUT"/* && mv /tmp/sweep_h200-$PART.tgz "$OUT/"
