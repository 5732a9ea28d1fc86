#!/usr/bin/env bash
# /metrics of `gpuwatch serve --demo` through promtool and Prometheus's own parser.
#
#   tests/integration/promtool_metrics_test.sh BUILD_DIR   (BUILD_DIR/gpuwatch, or the binary itself)
#
# Three instances on loopback (GPUWATCH_IT_PORT, default 19840, and the next two):
#   plain    gpuwatch --demo serve
#   process  ... --process-metrics --process-user
#   dcgm     ... --dcgm-compat
#   smi      ... --nvidia-smi-compat
# For each, both formats:
#   text/plain (`Accept: text/plain`): Content-Type `text/plain; version=0.0.4;
#     charset=utf-8`; `promtool check metrics` finds no problem. With
#     --dcgm-compat the only findings allowed are on DCGM_FI_* series and are
#     the two that dcgm-exporter's own names and labels cause (camelCase labels
#     UUID/modelName/Hostname; counters without _total): gpuwatch's series
#     stay lint-clean and nothing may fail to parse. With --nvidia-smi-compat
#     the only findings allowed are nvidia_gpu_exporter's own (gauges named
#     *_total, as that exporter types the ECC totals).
#   OpenMetrics (`Accept: application/openmetrics-text; version=1.0.0`):
#     Content-Type `application/openmetrics-text; version=1.0.0; charset=utf-8`;
#     the body ends with `# EOF`; the same series as the text body. promtool
#     2.42's `check metrics` reads only the text format (it stops at OpenMetrics'
#     `info` type), so the OpenMetrics bodies are parsed by a real Prometheus
#     (GPUWATCH_IT_PROM_PORT, default 19091), which asks for OpenMetrics: every
#     target up with no scrape error, every sample ingested, and gpuwatch_gpu
#     recorded with type `info` (only an OpenMetrics parse gives that), every
#     `# UNIT` recorded (gpuwatch_memory_used_bytes: bytes), and the DCGM
#     energy counter stored under its own name with type `unknown`.
# Plus: no Accept header gives the text format; the process series carry pid,
# command and user; DCGM_FI_DEV_FB_USED is gpuwatch_memory_used_bytes in MiB;
# nvidia_smi_memory_used_bytes is gpuwatch_memory_used_bytes, labelled by uuid
# without "GPU-"; gpuwatch_driver_info, gpuwatch_exporter_nvml_failures_total
# and every call's gpuwatch_exporter_nvml_errors_total (0) are there from the
# first scrape.
#
# Prints `ok - ...` / `not ok - ...` per check and `N passed, M failed`; exits 0
# only when all pass (77 when promtool or curl is missing). KEEP_WORK=1 keeps
# the temp directory.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
if [ -d "$1" ]; then gpuwatch=$(cd "$1" && pwd)/gpuwatch; else gpuwatch=$1; fi
here=$(cd "$(dirname "$0")" && pwd)
for tool in promtool curl python3; do
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

port0=${GPUWATCH_IT_PORT:-19840}
prom_port=${GPUWATCH_IT_PROM_PORT:-19091}
prom=http://127.0.0.1:$prom_port
variants=(plain process dcgm smi)
declare -A port=([plain]=$port0 [process]=$((port0 + 1)) [dcgm]=$((port0 + 2)) [smi]=$((port0 + 3)))
declare -A flags=([plain]="" [process]="--process-metrics --process-user" [dcgm]="--dcgm-compat"
  [smi]="--nvidia-smi-compat")
text_type="text/plain; version=0.0.4; charset=utf-8"
om_accept="application/openmetrics-text; version=1.0.0"
om_type="application/openmetrics-text; version=1.0.0; charset=utf-8"

# shellcheck source-path=SCRIPTDIR source=../tap.sh
source "$here/../tap.sh"
tap_start promtool-test

# fetch NAME VARIANT [ACCEPT]: body to $work/NAME.body, Content-Type to $work/NAME.type
fetch() {
  local accept=()
  [ -n "${3:-}" ] && accept=(-H "Accept: $3")
  curl -sS --max-time 10 "${accept[@]}" -o "$work/$1.body" -D "$work/$1.headers" \
    -w '%{http_code}' "http://127.0.0.1:${port[$2]}/metrics" >"$work/$1.status" 2>>"$work/curl.log"
  grep -i '^content-type:' "$work/$1.headers" | sed 's/^[^:]*:[[:space:]]*//; s/\r$//' >"$work/$1.type"
}
# The series of an exposition (name and labels of every sample line), sorted.
series_of() { grep -v '^#' "$1" | grep -v '^$' | sed 's/ [^ ]*$//' | LC_ALL=C sort; }

unset GPUWATCH_FAKE_TIME GPUWATCH_NVML_LIBRARY GPUWATCH_FAKE_SCENARIO
export HOME=$work/home
mkdir -p "$HOME"

for v in "${variants[@]}"; do
  # shellcheck disable=SC2086  # flags are words
  "$gpuwatch" --demo serve --listen "127.0.0.1:${port[$v]}" ${flags[$v]} >"$work/gpuwatch-$v.log" 2>&1 &
  pids+=($!)
done
for v in "${variants[@]}"; do
  deadline=$((SECONDS + 30))
  code=""
  while [ $SECONDS -lt $deadline ]; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port[$v]}/readyz")
    [ "$code" = 200 ] && break
    sleep 0.2
  done
  expect "$v: /readyz answers 200 within 30 s" "$code" 200
done
[ "$failed" -eq 0 ] || finish

smi_allowed_re='^nvidia_smi_[a-z0-9_]+_total non-counter metrics should not have "_total" suffix$'
lint_allowed_re='^DCGM_FI_[A-Z0-9_]+ (label names should be written in '"'"'snake_case'"'"' not '"'"'camelCase'"'"'|counter metrics should have "_total" suffix)$'
for v in "${variants[@]}"; do
  # --- text format ---
  fetch "$v-text" "$v" "text/plain"
  expect "$v: text/plain answers 200" "$(cat "$work/$v-text.status")" 200
  expect "$v: text/plain Content-Type" "$(cat "$work/$v-text.type")" "$text_type"
  promtool check metrics <"$work/$v-text.body" >"$work/$v-promtool.out" 2>&1
  rc=$?
  if [ "$v" = dcgm ]; then
    others=$(grep -Ev "$lint_allowed_re" "$work/$v-promtool.out")
    if [ "$rc" -ne 1 ] && [ -z "$others" ]; then
      ok "$v: promtool check metrics: no parse error, findings only on DCGM_FI_* names ($(wc -l <"$work/$v-promtool.out") camelCase/_total findings from dcgm-exporter's naming)"
    else
      not_ok "$v: promtool check metrics: no parse error, findings only on DCGM_FI_* names (rc $rc)"
      echo "$others" | head -n 10 | sed 's/^/#   /'
    fi
    expect "$v: gpuwatch_* series are lint-clean next to the DCGM ones" \
      "$(grep -c '^gpuwatch_' "$work/$v-promtool.out")" 0
  elif [ "$v" = smi ]; then
    others=$(grep -Ev "$smi_allowed_re" "$work/$v-promtool.out")
    if [ "$rc" -ne 1 ] && [ -z "$others" ]; then
      ok "$v: promtool check metrics: no parse error, findings only nvidia_gpu_exporter's gauges named *_total ($(wc -l <"$work/$v-promtool.out"))"
    else
      not_ok "$v: promtool check metrics: no parse error, findings only on nvidia_smi_*_total (rc $rc)"
      echo "$others" | head -n 10 | sed 's/^/#   /'
    fi
  else
    if [ "$rc" -eq 0 ] && [ ! -s "$work/$v-promtool.out" ]; then
      ok "$v: promtool check metrics finds no problem ($(series_of "$work/$v-text.body" | wc -l) samples)"
    else
      not_ok "$v: promtool check metrics finds no problem (rc $rc)"
      head -n 10 "$work/$v-promtool.out" | sed 's/^/#   /'
    fi
  fi

  # --- OpenMetrics ---
  fetch "$v-om" "$v" "$om_accept"
  expect "$v: OpenMetrics answers 200" "$(cat "$work/$v-om.status")" 200
  expect "$v: OpenMetrics Content-Type" "$(cat "$work/$v-om.type")" "$om_type"
  expect "$v: the OpenMetrics body ends with '# EOF' (once, with its newline)" \
    "$(tail -c 6 "$work/$v-om.body" | od -An -c | tr -s ' ')$(grep -c '^# EOF$' "$work/$v-om.body")" \
    " # E O F \n1"
  expect "$v: OpenMetrics and text bodies hold the same series" \
    "$(series_of "$work/$v-om.body" | md5sum)" "$(series_of "$work/$v-text.body" | md5sum)"
done

fetch default plain ""
expect "no Accept header: the text format" "$(cat "$work/default.type")" "$text_type"

# --- what the variants add ---
expect "process: gpuwatch_process_memory_used_bytes carries gpu, pid, command, user, the cgroup's ids and the pod's names (demo pid 41001: alice, in a container; 41101: Slurm job 88123; 41201: a Kubernetes pod)" \
  "$(grep -c '^gpuwatch_process_memory_used_bytes{gpu="0",.*pid="41001",command="[^"]\+",user="alice",container_id="[0-9a-f]\{64\}",pod_uid="",pod="",namespace="",container="",slurm_job_id=""}' "$work/process-text.body") $(grep -c '^gpuwatch_process_memory_used_bytes{.*pid="41101",.*slurm_job_id="88123"}' "$work/process-text.body") $(grep -c '^gpuwatch_process_memory_used_bytes{.*pid="41201",.*pod_uid="3f1c9a2e-7b4d-4e8a-9c61-2d5f80b7a4e3",pod="resnet50-train-6d8f9c7b5-xk2lq",namespace="team-vision",container="trainer",' "$work/process-text.body")" "1 1 1"
expect "process: one gpuwatch_process_memory_used_bytes per demo process (8)" \
  "$(grep -c '^gpuwatch_process_memory_used_bytes{' "$work/process-text.body")" 8
expect "plain: no per-process series without --process-metrics" \
  "$(grep -c '^gpuwatch_process_' "$work/plain-text.body")" 0
python3 - "$work/dcgm-text.body" >"$work/dcgm-check.out" <<'EOF'
import re, sys
fb, used = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'DCGM_FI_DEV_FB_USED\{(.*)\} (\S+)$', line)
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        assert {"gpu", "UUID", "modelName", "Hostname", "device", "pci_bus_id"} <= labels.keys(), labels
        fb[labels["gpu"]] = float(m.group(2))
    m = re.match(r'gpuwatch_memory_used_bytes\{(.*)\} (\S+)$', line)
    if m:
        used[dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))["gpu"]] = float(m.group(2))
assert fb and fb.keys() == used.keys(), (fb, used)
for gpu in fb:
    assert abs(fb[gpu] * 1048576 - used[gpu]) <= 1e-6 * max(1.0, used[gpu]), (gpu, fb[gpu], used[gpu])
print(len(fb))
EOF
expect "dcgm: DCGM_FI_DEV_FB_USED (labels gpu UUID modelName Hostname device pci_bus_id) = gpuwatch_memory_used_bytes / 2^20 for each of the 8 demo GPUs" \
  "$(cat "$work/dcgm-check.out")" 8
expect "dcgm: the DCGM energy counter is untyped in text and unknown in OpenMetrics, same name" \
  "$(grep -c '^# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION untyped$' "$work/dcgm-text.body") $(grep -c '^# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown$' "$work/dcgm-om.body") $(grep -c '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total' "$work/dcgm-om.body")" "1 1 0"
python3 - "$work/smi-text.body" >"$work/smi-check.out" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
smi, used, info = {}, {}, {}
for line in text.splitlines():
    m = re.match(r'nvidia_smi_memory_used_bytes\{uuid="([^"]*)"\} (\S+)$', line)
    if m:
        smi[m.group(1)] = float(m.group(2))
    m = re.match(r'gpuwatch_memory_used_bytes\{(.*)\} (\S+)$', line)
    if m:
        used[dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))["uuid"].removeprefix("GPU-")] = float(m.group(2))
    m = re.match(r'nvidia_smi_gpu_info\{(.*)\} 1$', line)
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        assert {"uuid", "name", "driver_version", "index", "cuda_version", "pci_bus_id"} <= labels.keys(), labels
        info[labels["uuid"]] = labels
assert smi and smi == used, (smi, used)
assert info.keys() == smi.keys(), info
for family in ("nvidia_smi_utilization_gpu_ratio", "nvidia_smi_temperature_gpu", "nvidia_smi_power_draw_watts"):
    assert re.search("^" + family + r'\{uuid="', text, re.M), family
print(len(smi))
EOF
expect "smi: nvidia_smi_memory_used_bytes{uuid} = gpuwatch_memory_used_bytes (uuid without GPU-), nvidia_smi_gpu_info for each of the 8 demo GPUs" \
  "$(cat "$work/smi-check.out")" 8
expect "plain: gpuwatch_driver_info (driver_version, cuda_version) and nvml_failures_total 0 from the first scrape" \
  "$(grep -c '^gpuwatch_driver_info{driver_version="[^"]\+",cuda_version="[^"]\+",' "$work/plain-text.body") $(grep -c '^gpuwatch_exporter_nvml_failures_total{hostname="[^"]*"} 0$' "$work/plain-text.body")" "1 1"
expect "plain: every call's gpuwatch_exporter_nvml_errors_total is 0 from the first scrape (memory, power, temperature)" \
  "$(grep -c '^gpuwatch_exporter_nvml_errors_total{call="nvmlDevice\(GetMemoryInfo_v2\|GetPowerUsage\|GetTemperature\)",hostname="[^"]*"} 0$' "$work/plain-text.body")" 3
expect "plain: no nvidia_smi_* or DCGM_FI_* without their flag" \
  "$(grep -c '^nvidia_smi_\|^DCGM_FI_' "$work/plain-text.body")" 0

# --- OpenMetrics through Prometheus's parser -------------------------------------
if ! command -v prometheus >/dev/null; then
  echo "# skip: prometheus not found: the OpenMetrics bodies were not parsed by Prometheus"
  finish
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$prom_port") 2>/dev/null; then
  not_ok "port 127.0.0.1:$prom_port is free (set GPUWATCH_IT_PROM_PORT)"
  finish
fi
cat >"$work/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: gpuwatch
    static_configs:
      - targets: ["127.0.0.1:${port[plain]}", "127.0.0.1:${port[process]}", "127.0.0.1:${port[dcgm]}", "127.0.0.1:${port[smi]}"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
targets_json() { curl -s --max-time 5 "$prom/api/v1/targets"; }
deadline=$((SECONDS + 60))
health=""
while [ $SECONDS -lt $deadline ]; do
  health=$(targets_json | python3 -c '
import json, sys
for t in sorted(json.load(sys.stdin)["data"]["activeTargets"], key=lambda t: t["scrapeUrl"]):
    print(t["scrapeUrl"], t["health"], repr(t["lastError"]))' 2>/dev/null)
  [ "$(echo "$health" | grep -c " up ''$")" = "${#variants[@]}" ] && break
  sleep 1
done
expect "Prometheus scrapes all four (OpenMetrics negotiated) with no error" "$health" \
  "$(for v in "${variants[@]}"; do echo "http://127.0.0.1:${port[$v]}/metrics up ''"; done | LC_ALL=C sort)"
sleep 2
for v in "${variants[@]}"; do
  fetch "$v-om2" "$v" "$om_accept"
  scraped=$(python3 "$here/promq.py" "$prom" "scrape_samples_scraped{instance=\"127.0.0.1:${port[$v]}\"}" |
    awk '{print $NF}')
  expect "$v: Prometheus ingested every OpenMetrics sample" "$scraped" "$(series_of "$work/$v-om2.body" | wc -l)"
done
expect "gpuwatch_gpu is recorded with type info (parsed as OpenMetrics)" \
  "$(curl -s "$prom/api/v1/metadata?metric=gpuwatch_gpu" | python3 -c '
import json, sys
print(sorted({m["type"] for m in json.load(sys.stdin)["data"].get("gpuwatch_gpu", [])}))')" "['info']"
metadata() {
  curl -s "$prom/api/v1/metadata?metric=$1" | python3 -c '
import json, sys
print(sorted({(m["type"], m["unit"]) for m in json.load(sys.stdin)["data"].get(sys.argv[1], [])}))' "$1"
}
expect "gpuwatch_memory_used_bytes is recorded with its OpenMetrics unit" \
  "$(metadata gpuwatch_memory_used_bytes)" "[('gauge', 'bytes')]"
expect "gpuwatch_energy_joules (counter) is recorded with unit joules" \
  "$(metadata gpuwatch_energy_joules)" "[('counter', 'joules')]"
expect "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is recorded as unknown, under the DCGM name" \
  "$(metadata DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) $(python3 "$here/promq.py" "$prom" "count(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)" | awk '{print $NF}')" \
  "[('unknown', '')] 8"

finish
