#!/usr/bin/env bash
# `gpuwatch completion bash|zsh|fish` in the real shells, `gpuwatch man`
# through groff and man: each completes subcommands, options (global ones
# after a subcommand too), fixed choices and files; the page has no warnings.
#
#   tests/cli/completion_test.sh GPUWATCH_BINARY
#
# Prints `ok - ...` / `not ok - ...`; exits 0 only when every check passed.
# A shell that is not installed fails (scripts/install-deps.sh installs them).
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 GPUWATCH_BINARY" >&2
  exit 2
fi
gpuwatch=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../tap.sh
source "$here/../tap.sh"
tap_start completion-test
# check NAME EXPECTED-WORD OUTPUT: OUTPUT (words or lines) has EXPECTED-WORD.
check() {
  if printf '%s\n' $3 | grep -xF -- "$2" >/dev/null; then ok "$1"; else not_ok "$1 (got: $(echo $3 | head -c 300))"; fi
}
check_not() {
  if printf '%s\n' $3 | grep -xF -- "$2" >/dev/null; then not_ok "$1 (got: $3)"; else ok "$1"; fi
}
for tool in bash zsh fish groff man; do
  command -v "$tool" >/dev/null || not_ok "$tool is installed (scripts/install-deps.sh)"
done

# ---- bash ----
if command -v bash >/dev/null; then
  "$gpuwatch" completion bash >"$work/gpuwatch.bash" || not_ok "gpuwatch completion bash"
  if bash -n "$work/gpuwatch.bash"; then ok "bash: syntax"; else not_ok "bash: syntax"; fi
  touch "$work/run.jsonl" "$work/rules.yaml"
  # bash_complete WORD...: COMPREPLY for the command line WORD... (the last
  # word being completed), from a real bash that sourced the script.
  bash_complete() {
    (cd "$work" && bash --norc --noprofile -c '
      source ./gpuwatch.bash
      COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      _gpuwatch; printf "%s\n" "${COMPREPLY[@]}"' bash "$@")
  }
  check "bash: gpuwatch w<TAB> is watch" watch "$(bash_complete gpuwatch w)"
  check "bash: gpuwatch <TAB> has completion" completion "$(bash_complete gpuwatch '')"
  check "bash: watch --<TAB> has --interval" --interval "$(bash_complete gpuwatch watch --)"
  check "bash: watch --<TAB> has the global --replay" --replay "$(bash_complete gpuwatch watch --)"
  check_not "bash: watch --<TAB> has not top's --theme" --theme "$(bash_complete gpuwatch watch --)"
  check "bash: --demo before the subcommand, then wat<TAB>" watch "$(bash_complete gpuwatch --demo wat)"
  check "bash: --color <TAB> after a subcommand" always "$(bash_complete gpuwatch watch --color '')"
  check "bash: --color=<TAB> (split at =)" never "$(bash_complete gpuwatch top --color = n)"
  check "bash: query --format <TAB>" csv,noheader "$(bash_complete gpuwatch query --format '')"
  check "bash: completion <TAB>" zsh "$(bash_complete gpuwatch completion '')"
  check "bash: --replay <TAB> completes files" run.jsonl "$(bash_complete gpuwatch top --replay r)"
  check "bash: watch --rules <TAB> completes files" rules.yaml "$(bash_complete gpuwatch watch --rules ru)"
  check "bash: an option's value is not taken for the subcommand" watch \
    "$(bash_complete gpuwatch --id top wat)"
  check "bash: run -- <TAB> completes a program" bash "$(bash_complete gpuwatch run -- bas)"
fi

# ---- zsh ----
if command -v zsh >/dev/null; then
  mkdir -p "$work/zsh"
  "$gpuwatch" completion zsh >"$work/zsh/_gpuwatch" || not_ok "gpuwatch completion zsh"
  if zsh -n "$work/zsh/_gpuwatch"; then ok "zsh: syntax"; else not_ok "zsh: syntax"; fi
  if zsh -f -c "fpath=($work/zsh \$fpath); autoload -U compinit; compinit -u -D -d $work/zcompdump;
                [[ \$_comps[gpuwatch] == _gpuwatch ]]" 2>"$work/zsh.err" && [ ! -s "$work/zsh.err" ]; then
    ok "zsh: compinit loads it for gpuwatch (#compdef)"
  else
    not_ok "zsh: compinit loads it for gpuwatch: $(cat "$work/zsh.err")"
  fi
  zsh_complete() { (cd "$work" && timeout 60 zsh -f "$here/zsh_complete.zsh" "$work/zsh" "$1"); }
  check "zsh: gpuwatch w<TAB> is watch" watch "$(zsh_complete 'gpuwatch w')"
  check "zsh: watch --inter<TAB> is --interval" --interval "$(zsh_complete 'gpuwatch watch --inter')"
  check "zsh: watch --<TAB> has the global --demo" --demo "$(zsh_complete 'gpuwatch watch --')"
  check "zsh: --color <TAB> after a subcommand" always "$(zsh_complete 'gpuwatch top --color ')"
  check "zsh: completion <TAB>" fish "$(zsh_complete 'gpuwatch completion ')"
fi

# ---- fish ----
if command -v fish >/dev/null; then
  "$gpuwatch" completion fish >"$work/gpuwatch.fish" || not_ok "gpuwatch completion fish"
  if fish -n "$work/gpuwatch.fish"; then ok "fish: syntax"; else not_ok "fish: syntax"; fi
  fish_complete() {
    (cd "$work" && HOME=$work fish --no-config -c "source $work/gpuwatch.fish; complete -C '$1'" | cut -f1)
  }
  check "fish: gpuwatch w<TAB> is watch" watch "$(fish_complete 'gpuwatch w')"
  check "fish: watch --<TAB> has --interval" --interval "$(fish_complete 'gpuwatch watch --')"
  check "fish: watch --<TAB> has the global --replay" --replay "$(fish_complete 'gpuwatch watch --')"
  check_not "fish: watch --<TAB> has not top's --theme" --theme "$(fish_complete 'gpuwatch watch --')"
  check "fish: --color <TAB>" auto "$(fish_complete 'gpuwatch watch --color ')"
  check "fish: select --format <TAB>" uuid "$(fish_complete 'gpuwatch select --format ')"
  check "fish: --replay <TAB> completes files" run.jsonl "$(fish_complete 'gpuwatch top --replay ')"
fi

# ---- man ----
"$gpuwatch" man >"$work/gpuwatch.1" || not_ok "gpuwatch man"
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$work/gpuwatch.1" 2>&1)
  if [ -z "$warnings" ]; then ok "man: groff -ww has no warnings"; else not_ok "man: groff: $warnings"; fi
fi
if command -v man >/dev/null; then
  warnings=$(MANWIDTH=80 man --warnings -l "$work/gpuwatch.1" 2>&1 >"$work/man.txt")
  if [ -z "$warnings" ]; then ok "man: man --warnings -l has none"; else not_ok "man: $warnings"; fi
  if grep -q "gpuwatch watch" "$work/man.txt" && grep -q "EXIT STATUS" "$work/man.txt"; then
    ok "man: renders"
  else
    not_ok "man: renders ($(head -c 300 "$work/man.txt"))"
  fi
fi

finish
