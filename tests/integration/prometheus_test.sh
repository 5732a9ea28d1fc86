#!/usr/bin/env bash
# gpuwatch under a real Prometheus (Debian's `prometheus` package).
#
#   tests/integration/prometheus_test.sh BUILD_DIR      (BUILD_DIR/gpuwatch, or the binary itself)
#
# Starts three `gpuwatch serve` instances on loopback, each on a fake-NVML
# scenario of tests/integration/scenarios/ under its own --hostname:
#   host-a  127.0.0.1:19835  2 H200s, GPU 1 hot (85 °C, thermal slowdown)
#   host-b  127.0.0.1:19836  1 H200, pid 9052001 leaking 6 GiB/min
#   host-c  127.0.0.1:19837  4 idle GPUs
# (host-a with --process-metrics) and a Prometheus on 127.0.0.1:19090 that
# scrapes them every second with the shipped alert and recording rules
# (deploy/prometheus/gpuwatch-rules.yml, gpuwatch-recording.yml). Then, through the
# HTTP API: every target is up; GPUs per host; memory per host equals what
# `gpuwatch --scenario FILE --json` reports for the same scenario, raw and
# recorded (hostname:gpuwatch_memory_used_bytes:sum); the GPU
# labels; the temperature, throttling, leak and time-to-OOM alerts fire for
# host-a's hot GPU and host-b's leaking GPU and for nothing else (nothing at
# all for host-c; none of the XID, starved, pre-allocation, row-remap, PCIe,
# rule and NVML-error alerts); the throttling diagnosis series stands for
# host-a's hot GPU only; gpuwatch_driver_info and the NVML-failure total (0)
# come from every host; every Grafana panel query and variable of
# deploy/grafana/gpuwatch-dashboard.json answers with data and every metric it
# and the rules use is exported; and GpuwatchExporterDown fires for host-c
# once its gpuwatch is stopped, with its hostname.
#
# Prints `ok - ...` / `not ok - ...` per check and `N passed, M failed`; exits 0
# only when every check passed (77, for ctest's SKIP_RETURN_CODE, when
# prometheus, curl or python3 is missing). Every process it started is stopped
# on exit. Takes about 3 minutes (the leak verdict needs ~2 min of samples).
# Ports: GPUWATCH_IT_PORT (first gpuwatch port, default 19835) and
# GPUWATCH_IT_PROM_PORT (default 19090). KEEP_WORK=1 keeps the temp directory.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
if [ -d "$1" ]; then gpuwatch=$(cd "$1" && pwd)/gpuwatch; else gpuwatch=$1; fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for tool in prometheus curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "skip: $tool not found (Debian: apt-get install prometheus curl python3)"
    exit 77
  fi
done
if [ ! -x "$gpuwatch" ]; then
  echo "not ok - $gpuwatch is not an executable"
  echo "0 passed, 1 failed"
  exit 1
fi

port0=${GPUWATCH_IT_PORT:-19835}
prom_port=${GPUWATCH_IT_PROM_PORT:-19090}
prom=http://127.0.0.1:$prom_port
hosts=(host-a host-b host-c)
declare -A port=([host-a]=$port0 [host-b]=$((port0 + 1)) [host-c]=$((port0 + 2)))

# shellcheck source-path=SCRIPTDIR source=../tap.sh
source "$here/../tap.sh"
tap_start prometheus-test
declare -A pid_of=()
q() { python3 "$here/promq.py" "$prom" "$@"; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "${port[@]}" "$prom_port"; do
  if ! port_free "$p"; then
    not_ok "port 127.0.0.1:$p is free (set GPUWATCH_IT_PORT / GPUWATCH_IT_PROM_PORT)"
    finish
  fi
done

# Nothing of the caller's environment steers the fake NVML or writes to $HOME.
unset GPUWATCH_FAKE_TIME GPUWATCH_NVML_LIBRARY GPUWATCH_FAKE_SCENARIO
export HOME=$work/home
mkdir -p "$HOME"

declare -A started_at=()
# host-a also exports its processes (--process-metrics), for the dashboard's process panels.
declare -A extra=([host-a]=--process-metrics [host-b]= [host-c]=)
for h in "${hosts[@]}"; do
  started_at[$h]=$(date +%s.%N)
  # shellcheck disable=SC2086  # ${extra[$h]}: no flag or one
  "$gpuwatch" serve --listen "127.0.0.1:${port[$h]}" --scenario "$here/scenarios/$h.yaml" \
    --hostname "$h" --interval 1s --leak-window 1s ${extra[$h]} >"$work/gpuwatch-$h.log" 2>&1 &
  pid_of[$h]=$!
  pids+=($!)
done

# The rules Prometheus loads: the shipped file with every `for:` shortened to
# 5s, so alerts fire within seconds of their condition. `for:` itself is
# covered by `promtool test rules deploy/prometheus/gpuwatch-rules.test.yml`;
# here the expressions, labels and templates meet real gpuwatch series.
sed -E 's/^([[:space:]]*for:[[:space:]]*).*/\15s/' "$root/deploy/prometheus/gpuwatch-rules.yml" \
  >"$work/gpuwatch-rules.yml"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $work/gpuwatch-rules.yml
  - $root/deploy/prometheus/gpuwatch-recording.yml
scrape_configs:
  - job_name: gpuwatch
    honor_labels: false
    static_configs:
      - targets: ["127.0.0.1:${port[host-a]}", "127.0.0.1:${port[host-b]}", "127.0.0.1:${port[host-c]}"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)

# --- all targets up (bounded) ------------------------------------------------
deadline=$((SECONDS + 120))
up=""
while [ $SECONDS -lt $deadline ]; do
  up=$(q 'up{job="gpuwatch"}' instance 2>/dev/null)
  [ "$(echo "$up" | grep -c ' 1$')" = 3 ] && break
  sleep 1
done
expect "all three gpuwatch targets are up within 120 s" "$up" \
  "$(for h in "${hosts[@]}"; do echo "127.0.0.1:${port[$h]} 1"; done)"
if [ "$(echo "$up" | grep -c ' 1$')" != 3 ]; then finish; fi
sleep 3 # a few scrapes of every series

# --- inventory -----------------------------------------------------------------
expect "count by (hostname) (gpuwatch_memory_total_bytes) is 2/1/4" \
  "$(q 'count by (hostname) (gpuwatch_memory_total_bytes)' hostname)" \
  "$(printf 'host-a 2\nhost-b 1\nhost-c 4')"
expect "gpuwatch_devices per host is 2/1/4" \
  "$(q 'gpuwatch_devices' hostname)" "$(printf 'host-a 2\nhost-b 1\nhost-c 4')"
expect "gpuwatch_gpu_up is 1 for all 7 GPUs" "$(q 'count(gpuwatch_gpu_up == 1)')" "7"

# The GPUs' identity labels are those `gpuwatch --json` reports for the same scenario.
json_of() { # json_of HOST [FAKE_TIME]: the snapshot of the scenario as `gpuwatch --json` sees it
  if [ -n "${2:-}" ]; then
    GPUWATCH_FAKE_TIME=$2 "$gpuwatch" --scenario "$here/scenarios/$1.yaml" --json --no-processes
  else
    "$gpuwatch" --scenario "$here/scenarios/$1.yaml" --json --no-processes
  fi
}
for h in "${hosts[@]}"; do
  want=$(json_of "$h" | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    f = d["fields"]
    print(d["index"], f["uuid"], f["pci_bus_id"], f["name"], 1)' | LC_ALL=C sort)
  got=$(q "gpuwatch_gpu_info{hostname=\"$h\"}" gpu uuid pci_bus_id model)
  expect "$h: gpuwatch_gpu_info labels (gpu, uuid, pci_bus_id, model) match gpuwatch --json" "$got" "$want"
done

# --- memory per host against gpuwatch --json ----------------------------------
# host-a and host-c are constants: the sums must be equal. host-b's leak moves
# with the scenario clock (seconds since the server's nvmlInit): the value
# Prometheus scraped at time T must lie between what --json reports at
# GPUWATCH_FAKE_TIME = T - start - 5 s (sampling interval, scrape and start-up
# lag) and T - start + 0.5 s.
sum_json() { python3 -c 'import json,sys; print(sum(d["fields"]["memory_used_bytes"] for d in json.load(sys.stdin)["devices"]))'; }
for h in host-a host-c; do
  expect "$h: sum(gpuwatch_memory_used_bytes) equals gpuwatch --json's sum" \
    "$(q "sum(gpuwatch_memory_used_bytes{hostname=\"$h\"})")" "$(json_of "$h" | sum_json)"
  # The recording rules (deploy/prometheus/gpuwatch-recording.yml) on real series.
  expect "$h: recorded hostname:gpuwatch_memory_used_bytes:sum equals gpuwatch --json's sum" \
    "$(q "hostname:gpuwatch_memory_used_bytes:sum{hostname=\"$h\"}")" "$(json_of "$h" | sum_json)"
done
expect "recorded hostname:gpuwatch_gpus:count is 2/1/4" \
  "$(q 'hostname:gpuwatch_gpus:count' hostname)" "$(printf 'host-a 2\nhost-b 1\nhost-c 4')"
now=$(date +%s.%N)
got_b=$(q "sum(gpuwatch_memory_used_bytes{hostname=\"host-b\"})" --time "$now")
scraped_b=$(q "timestamp(gpuwatch_memory_used_bytes{hostname=\"host-b\"})" --time "$now" | awk '{print $NF}')
age=$(python3 -c "print(max(0.0, $scraped_b - ${started_at[host-b]}))")
low=$(json_of host-b "$(python3 -c "print(max(0.0, $age - 5))")" | sum_json)
high=$(json_of host-b "$(python3 -c "print($age + 0.5)")" | sum_json)
if python3 -c "import sys; sys.exit(0 if $low <= $got_b <= $high else 1)" 2>/dev/null; then
  ok "host-b: sum(gpuwatch_memory_used_bytes) = $got_b lies in gpuwatch --json's [$low, $high] at scenario age ${age}s"
else
  not_ok "host-b: sum(gpuwatch_memory_used_bytes) = $got_b lies in gpuwatch --json's [$low, $high] at scenario age ${age}s"
fi
expect "host-a GPU 1 reads 85 °C, GPU 0 55 °C" \
  "$(q 'gpuwatch_temperature_celsius{hostname="host-a"}' gpu)" "$(printf '0 55\n1 85')"

# --- alerts ------------------------------------------------------------------------
# Wait (bounded) until the four expected alerts fire: temperature at once
# (5 s), gpuwatch's own gpu_throttled_thermal after its 30 s, time-to-OOM
# with the detector's out-of-memory forecast (~1 min), the leak with its
# verdict (--leak-window 1s: a span of a quarter of the time to full, 2 to
# 6 min, instead of 10 to 30: host-b's GPU, 10 min from full, gets it at
# about 2 min).
firing() { q "ALERTS{alertstate=\"firing\",alertname=\"$1\"}" hostname gpu | awk '{print $1, $2}' | sort -u; }
deadline=$((SECONDS + 420))
while [ $SECONDS -lt $deadline ]; do
  n=0
  [ "$(firing GpuwatchTemperatureHigh)" = "host-a 1" ] && n=$((n + 1))
  [ "$(firing GpuwatchGPUThrottled)" = "host-a 1" ] && n=$((n + 1))
  [ "$(firing GpuwatchMemoryLeakSuspected)" = "host-b 0" ] && n=$((n + 1))
  [ "$(firing GpuwatchOOMSoon)" = "host-b 0" ] && n=$((n + 1))
  [ $n = 4 ] && break
  sleep 2
done
expect "GpuwatchTemperatureHigh fires for host-a GPU 1 only" "$(firing GpuwatchTemperatureHigh)" "host-a 1"
expect "GpuwatchGPUThrottled fires for host-a GPU 1 only, rule gpu_throttled_thermal, severity warning" \
  "$(q 'ALERTS{alertstate="firing",alertname="GpuwatchGPUThrottled"}' hostname gpu rule severity)" \
  "host-a 1 gpu_throttled_thermal warning 1"
expect "GpuwatchMemoryLeakSuspected fires for host-b GPU 0 only" \
  "$(firing GpuwatchMemoryLeakSuspected)" "host-b 0"
expect "GpuwatchMemoryLeakSuspected fires for host-b's device and for pid 9052001" \
  "$(q 'ALERTS{alertstate="firing",alertname="GpuwatchMemoryLeakSuspected"}' scope pid)" \
  "$(printf 'device - 1\nprocess 9052001 1')"
expect "GpuwatchOOMSoon fires for host-b GPU 0 only" "$(firing GpuwatchOOMSoon)" "host-b 0"
rate=$(q 'gpuwatch_leak_rate_bytes_per_second{hostname="host-b",scope="process",pid="9052001"}' | awk '{print $NF}')
if python3 -c "import sys; r = float('${rate:-0}'); sys.exit(0 if abs(r - 6 * 2**30 / 60) <= 0.3 * 6 * 2**30 / 60 else 1)" 2>/dev/null; then
  ok "host-b pid 9052001's leak rate $rate B/s is 6 GiB/min within 30 %"
else
  not_ok "host-b pid 9052001's leak rate '$rate' B/s is 6 GiB/min within 30 %"
fi
expect "no alert at all (firing or pending) for host-c" "$(q 'ALERTS{hostname="host-c"}' alertname)" ""
expect "no alert at all for host-a GPU 0" "$(q 'ALERTS{hostname="host-a",gpu="0"}' alertname)" ""
expect "nothing else fires (memory, GPU lost, ECC, exporter stale/down)" \
  "$(q 'ALERTS{alertstate="firing",alertname!~"GpuwatchTemperatureHigh|GpuwatchGPUThrottled|GpuwatchMemoryLeakSuspected|GpuwatchOOMSoon"}' alertname instance)" ""
expect "the throttling diagnosis stands for host-a GPU 1 only (gpuwatch_diagnosis_active, every GPU 0 or 1)" \
  "$(q 'gpuwatch_diagnosis_active{kind="throttling"} == 1' hostname gpu) $(q 'count(gpuwatch_diagnosis_active{kind=~"starved|throttling"})' | awk '{print $NF}')" \
  "host-a 1 1 14"
expect "every host exports gpuwatch_driver_info and gpuwatch_exporter_nvml_failures_total 0" \
  "$(q 'count(gpuwatch_driver_info{driver_version!="",cuda_version!=""})' | awk '{print $NF}') $(q 'count(gpuwatch_exporter_nvml_failures_total == 0)' | awk '{print $NF}')" \
  "3 3"
expect "alert annotations render host and GPU" \
  "$(curl -s "$prom/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    if a["labels"]["alertname"] == "GpuwatchTemperatureHigh":
        print(a["annotations"]["summary"])')" "GPU above 80 °C on host-a GPU 1"

# --- the Grafana dashboard against live data --------------------------------------
while IFS= read -r line; do
  case $line in
    "ok - "*) ok "dashboard: ${line#ok - }" ;;
    "not ok - "*) not_ok "dashboard: ${line#not ok - }" ;;
  esac
done < <(python3 "$here/check_dashboard.py" --prometheus "$prom")

# --- an exporter that goes away -------------------------------------------------------
kill -TERM "${pid_of[host-c]}"
deadline=$((SECONDS + 60))
down=""
while [ $SECONDS -lt $deadline ]; do
  down=$(q 'ALERTS{alertstate="firing",alertname="GpuwatchExporterDown"}' instance severity hostname)
  [ -n "$down" ] && break
  sleep 1
done
expect "GpuwatchExporterDown fires for host-c's target once its gpuwatch stops, named host-c" \
  "$down" "127.0.0.1:${port[host-c]} warning host-c 1"
if wait "${pid_of[host-c]}"; then ok "host-c's gpuwatch exits 0 on SIGTERM"; else
  not_ok "host-c's gpuwatch exits 0 on SIGTERM (status $?)"
fi

finish
