# shellcheck shell=bash
# What the shell tests share (sourced, after `set -uo pipefail`): a work
# directory that goes at exit with the processes the test started, and
# TAP-like lines counted as they are printed.
#
#   tap_start NAME       $work: a new directory; $pids: processes to end at exit
#   ok NAME / not_ok NAME
#   expect NAME GOT WANT exact comparison of two (multi-line) strings
#   finish               prints the counts and exits: 0 only when something
#                        passed and nothing failed; on failure, first the tail
#                        of every $work/*.log
#
# KEEP_WORK=1 keeps the work directory for a look afterwards.

passed=0
failed=0
pids=()

# shellcheck disable=SC2317  # called by the EXIT trap
tap_cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "# kept $work"; else rm -rf "$work"; fi
}

tap_start() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuwatch-$1.XXXXXX")
  trap tap_cleanup EXIT
  trap 'exit 130' INT TERM
}

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }

expect() {
  if [ "$2" = "$3" ]; then ok "$1"; else
    not_ok "$1"
    echo "#   got:  $(echo "$2" | head -c 600 | paste -sd '|')"
    echo "#   want: $(echo "$3" | head -c 600 | paste -sd '|')"
  fi
}

finish() {
  echo "$passed passed, $failed failed"
  if [ "$failed" -ne 0 ]; then
    local f
    for f in "$work"/*.log; do
      [ -f "$f" ] || continue
      echo "# --- tail of $(basename "$f")"
      tail -n 15 "$f" | sed 's/^/#   /'
    done
    exit 1
  fi
  [ "$passed" -gt 0 ] || exit 1
  exit 0
}
