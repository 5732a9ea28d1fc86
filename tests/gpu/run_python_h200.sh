#!/usr/bin/env bash
# On the H200 (device tool, carry .pydeps from python_deps.sh): pip install
# ./python with the machine's python3, the pytest suite, then the framework
# checks. Everything goes to $OUT. docs/python.md records the results.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export GPUWATCH_RUNTIME_DIR=$(mktemp -d)
{ python3 --version; g++ --version | head -1
  python3 -c "import torch, lightning, jax; print('torch', torch.__version__, 'lightning', lightning.__version__, 'jax', jax.__version__)"
  nvidia-smi -L; } > "$OUT/versions.txt" 2>&1

SECONDS=0
. tests/gpu/python_install.sh > "$OUT/install.log" 2>&1
echo "pip install ./python: rc $? in ${SECONDS}s" | tee -a "$OUT/install.log"

# A scenario that does not parse once crashed python3.12 here: libyaml-cpp had
# bound to _core's copies of its inline functions (fixed with --exclude-libs).
printf 'devices: [ {name: \n' > /tmp/bad.yaml
python3 -X faulthandler -c "
import gpuwatch
try:
    gpuwatch.snapshot(scenario='/tmp/bad.yaml')
except gpuwatch.Error as e:
    print('error:', e)
" > "$OUT/bad_scenario.txt" 2>&1; echo "rc $?" >> "$OUT/bad_scenario.txt"

# The core's suite, run as in CI (demo and fault scenarios).
(cd python/tests && timeout 300 python3 -X faulthandler -m pytest -q -p no:cacheprovider \
   > "$OUT/pytest.txt" 2>&1; echo "pytest rc $?" >> "$OUT/pytest.txt")
tail -3 "$OUT/pytest.txt"

step() {
  local name=$1; shift
  SECONDS=0
  timeout 240 "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  echo "$name: rc $? in ${SECONDS}s" | tee -a "$OUT/summary.txt"
}
step torch python3 tests/gpu/python_torch.py
step lightning python3 tests/gpu/python_lightning.py
step jax python3 tests/gpu/python_jax.py
step under_run bash tests/gpu/python_under_run.sh
cat "$OUT/summary.txt"
# The device tool returns a limited number of files: one archive of them all.
tar czf /tmp/python_h200.tgz -C "$OUT" . && mv /tmp/python_h200.tgz "$OUT/"
