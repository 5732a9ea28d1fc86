# The matches zsh's completion system offers for a command line, from a real
# interactive zsh in a pseudo-terminal (zsh/zpty), one a line.
#
#   zsh -f tests/cli/zsh_complete.zsh FPATH_DIR 'gpuwatch watch --inter'
#
# FPATH_DIR holds _gpuwatch. compadd is wrapped to print what it adds.
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PS1='' PROMPT='' RPROMPT=''; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w z "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { local -a __h; builtin compadd -A __h "$@"; (( $#__h )) && print -r -l -- "<<"${^__h}">>"; builtin compadd "$@" }'
zpty -w z "zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' menu no"
zpty -w z "print -r -- READY"
local line
while zpty -r z line; do [[ $line == *READY* && $line != *print* ]] && break; done
zpty -w -n z "$2"$'\t'
# Wait for the first match before typing on: input typed ahead of zle can
# cut the completion short.
while zpty -r z line; do
  if [[ $line == *'<<'*'>>'* ]]; then print -r -- "${${line#*<<}%>>*}"; break; fi
done
zpty -w z $'\C-u'"print -r -- DONE"
while zpty -r z line; do
  [[ $line == *DONE* && $line != *print* ]] && break
  [[ $line == *'<<'*'>>'* ]] && print -r -- "${${line#*<<}%>>*}"
done
zpty -d z
