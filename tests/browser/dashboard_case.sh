#!/usr/bin/env bash
# The live dashboard in a real browser against a real `gpuwatch serve --demo`
# (the 8-GPU demo fleet through the fake NVML): check_dashboard.mjs opens it,
# checks cards (status badges, top holders, the MIG GPU's instances, N/A
# reasons), charts (spans, thresholds, colours), the process table and its
# sorting (and at 800 px), the DEMO banner at the first paint and an alert,
# and watches live updates. Screenshots at 1280 and 800 px. With basic auth on, no credentials
# gets 401.
#   dashboard_case.sh BUILD_DIR ARTIFACT_DIR PORT
set -euo pipefail
source "$(dirname "$0")/case_lib.sh"
case_setup "$@"
"$build/gpuwatch" --demo serve --listen "127.0.0.1:$port" -i 1s >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
wait_for "http://127.0.0.1:$port/readyz" || true
# The demo fleet's hot GPU fires its alert after its rule's 30 s: wait for it
# (bounded), so the dashboard has an alert to show.
for _ in $(seq 1 90); do
  curl -sf "http://127.0.0.1:$port/api/v1/snapshot" | grep '"rule":"gpu_temperature_high"' >/dev/null && break
  sleep 1
done
node "$here/check_dashboard.mjs" "http://127.0.0.1:$port/" --expect-demo --expect-mig --seconds 10 \
  --screenshot "$artifacts/dashboard-demo-1280.png" --screenshot-narrow "$artifacts/dashboard-demo-800.png"

# Basic auth: no credentials -> 401 on the dashboard and the API; the probes stay open.
kill $server; wait $server 2>/dev/null || true
hash=$(python3 -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))" 2>/dev/null ||
       /usr/bin/python3 -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))")
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$work/web.yml"
"$build/gpuwatch" --demo serve --listen "127.0.0.1:$port" --web-config "$work/web.yml" >"$work/serve.log" 2>&1 &
server=$!
wait_for "http://127.0.0.1:$port/healthz" || true
fail() { echo "not ok - $*"; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 401 ] || fail "dashboard without credentials is 401"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 401 ] || fail "/metrics without credentials is 401"
[ "$(curl -s -o /dev/null -w '%{http_code}' -u alice:s3cret "http://127.0.0.1:$port/")" = 200 ] || fail "dashboard with credentials is 200"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ] || fail "/healthz stays open"
echo "ok - basic auth: 401 without credentials, 200 with them, probes open"
