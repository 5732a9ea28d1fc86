#!/usr/bin/env bash
# /metrics of two builds on this host's GPUs, taking turns: `serve -i 1s
# --process-metrics --process-user`, wrk (2 threads, 8 keep-alive connections,
# gzip) for 10 s after 2 s of warm-up, ROUNDS rounds (default 3). Prints per
# round and build the gzip body's size, wrk's p50 and p99, scrapes/s and the
# server's CPU a scrape (utime + stime over the requests).
#
#   bench/metrics_ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS]
#
# The binaries are gpuwatch-full executables (or the front); wrk and curl on PATH.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY [ROUNDS]" >&2
  exit 2
fi
before=$1
after=$2
rounds=${3:-3}
port=${GPUWATCH_BENCH_PORT:-19950}
url=http://127.0.0.1:$port/metrics
for round in $(seq "$rounds"); do
  for which in before after; do
    if [ $which = before ]; then bin=$before; else bin=$after; fi
    rt=$(mktemp -d)
    GPUWATCH_RUNTIME_DIR=$rt "$bin" serve -i 1s --listen "127.0.0.1:$port" --process-metrics \
      --process-user >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.1; done
    sleep 2
    size=$(curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' "$url")
    wrk -t2 -c8 -d2s -H 'Accept-Encoding: gzip' "$url" >/dev/null
    c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    out=$(wrk -t2 -c8 -d10s --latency -H 'Accept-Encoding: gzip' "$url")
    c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    requests=$(echo "$out" | awk '/requests in/{print $1}')
    us=$(python3 -c "import os; print(round(($c1 - $c0) / os.sysconf('SC_CLK_TCK') / $requests * 1e6, 1))")
    echo "round $round $which: body $size B; $(echo "$out" | awk '/ 50%/{printf "p50 %s ", $2} / 99%/{printf "p99 %s ", $2} /Requests\/sec/{printf "rps %s ", $2}')cpu/scrape $us us"
    kill "$pid"
    wait "$pid" 2>/dev/null
    rm -rf "$rt"
  done
done
