#!/usr/bin/env bash
# `cmake --install` lays out a working installation that runs from anywhere.
#
#   tests/integration/install_test.sh BUILD_DIR
#
# Installs BUILD_DIR into a temporary prefix, moves that prefix elsewhere (so
# nothing can come from the build or source tree's paths), then from / runs
# the installed `gpuwatch --demo`: the labelled 8-GPU demo fleet through the
# installed fake NVML, and the dashboard's page from the binary. Prints
# `ok - ...` / `not ok - ...`; exits 0 only when every check passed.
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../tap.sh
source "$here/../tap.sh"
tap_start install-test

if cmake --install "$build" --prefix "$work/staged" >"$work/install.log" 2>&1; then
  ok "cmake --install into a temporary prefix"
else
  not_ok "cmake --install into a temporary prefix"
  finish
fi
mv "$work/staged" "$work/moved"
prefix=$work/moved
for f in bin/gpuwatch bin/gpuwatch-full bin/gpuwatch-top lib/gpuwatch/libnvidia-ml-fake.so share/gpuwatch/scenarios/demo.yaml \
  share/gpuwatch/scenarios/demo.host/proc share/doc/gpuwatch/README.md \
  share/doc/gpuwatch/docs/architecture.md; do
  if [ -e "$prefix/$f" ]; then ok "installed $f"; else not_ok "installed $f"; fi
done

out=$(cd / && env -u GPUWATCH_NVML_LIBRARY -u GPUWATCH_FAKE_SCENARIO "$prefix/bin/gpuwatch" --demo --json 2>"$work/err")
count=$(echo "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))' 2>/dev/null)
if [ "$count" = 8 ]; then
  ok "the moved installation runs --demo from /: 8 GPUs"
else
  not_ok "the moved installation runs --demo from /: 8 GPUs (got '${count}')"
  sed 's/^/#   /' "$work/err" | tail -10
fi
text=$(cd / && "$prefix/bin/gpuwatch" --demo 2>&1)
if grep -q "DEMO" <<<"$text"; then ok "its status says DEMO"; else
  not_ok "its status says DEMO"
  echo "$text" | head -5 | sed 's/^/#   /'
fi
# Without its fake NVML the demo says where it looked, naming the prefix.
mv "$prefix/lib/gpuwatch" "$prefix/lib/gone"
err=$(cd / && "$prefix/bin/gpuwatch" --demo 2>&1 >/dev/null)
if grep -q "libnvidia-ml-fake.so) is neither in .* nor in $prefix/lib/gpuwatch" <<<"$err"; then
  ok "a missing fake NVML is named with the places looked in"
else
  not_ok "a missing fake NVML is named with the places looked in"
  echo "$err" | head -3 | sed 's/^/#   /'
fi
finish
