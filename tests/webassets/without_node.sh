#!/bin/sh
# A build on a machine without Node (no web/node_modules) still embeds the
# dashboard and the report: CMake takes the kept bundle web/bundle/.
#   without_node.sh SOURCE_DIR CMAKE
set -eu
src=$1 cmake=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/gw-nonode-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$cmake" -S "$src" -B "$work" -G Ninja -DGPUWATCH_WEB_NODE_MODULES="$work/none" \
     -DBUILD_TESTING=OFF > "$work/configure.log" 2>&1; then
  cat "$work/configure.log"; echo "FAIL: configure without node_modules"; exit 1
fi
grep -q "embedding the kept bundle web/bundle/" "$work/configure.log" || {
  cat "$work/configure.log"; echo "FAIL: configure did not take web/bundle/"; exit 1; }
"$cmake" --build "$work" --target gpuwatch_web_assets > "$work/build.log" 2>&1 || {
  cat "$work/build.log"; echo "FAIL: gpuwatch_web_assets did not build"; exit 1; }
assets=$(find "$work" -name web_assets.cc | head -1)
# Each file embedded whole: the generated view has the kept file's size.
for pair in kDashboardHtml:dashboard.html kDashboardJs:dashboard.js kDashboardCss:dashboard.css \
            kReportHtml:report.html kReportJs:report.js kReportCss:report.css; do
  name=${pair%%:*} file=${pair#*:}
  size=$(wc -c < "$src/web/bundle/$file")
  grep -q "${name}_bytes), ${size});" "$assets" || {
    echo "FAIL: $file ($size bytes) is not embedded as $name in $assets"; exit 1; }
done
echo "ok: without Node the build embeds web/bundle/"
