#!/usr/bin/env bash
# What linking a library costs in resident memory before main() does anything:
# an empty program (sleeps 2 s) built plain, with libcrypto, and with
# cpp-httplib (+ OpenSSL), its RSS and the pages each library has resident.
# The reference is the plain program, measured in the same run. For the gap
# between `gpuwatch top` and nvtop (docs/BENCHMARKS.md, "top next to nvtop").
#
#   bash bench/link_cost.sh
set -euo pipefail
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf '#include <unistd.h>\nint main() { sleep(2); return 0; }\n' >"$d/t.cc"
g++ -O2 "$d/t.cc" -o "$d/plain"
g++ -O2 "$d/t.cc" -o "$d/crypto" -Wl,--no-as-needed -lcrypto
g++ -O2 "$d/t.cc" -o "$d/httplib" -Wl,--no-as-needed -lcpp-httplib -lssl -lcrypto
for b in plain crypto httplib; do
  "$d/$b" &
  pid=$!
  sleep 1
  rss=$(awk '/^Rss:/ {print $2}' /proc/$pid/smaps_rollup)
  libs=$(awk '/^[0-9a-f]+-[0-9a-f]+ / {f=$6} /^Rss:/ && f ~ /\.so/ && f ~ /(crypto|ssl|httplib)/ {r[f]+=$2}
              END {for (k in r) {n=k; sub(/.*\//, "", n); printf "%s %d kB  ", n, r[k]}}' /proc/$pid/smaps)
  echo "$b: RSS $rss kB  $libs"
  wait $pid
done
