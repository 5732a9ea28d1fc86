#!/usr/bin/env bash
# `gpuwatch top` on the H200 (issue 15), through the device tool; carry
# .devtree (bin/gpuwatch and bin/tmux built or taken here, lib/ with what the
# GPU machine lacks) and .peers (the peers' sources, not in this repository:
# nvtop's .deb, nvitop).
#  1. Screens: top at 80x24 and 120x40 next to a torch job, its process view,
#     captured with tmux into $OUT/top_h200_screens.txt.
#  2. Cost: top, nvtop 3.0.1 and nvitop (TOOLS: also `full`, top in
#     gpuwatch-full, and `top-X`, a bin/gpuwatch-top-X) at a 1 s refresh, each 60 s on a
#     pseudo-terminal (script) with the torch job running, one after another,
#     CPU and peak RSS of the whole process tree (tests/gpu/cpu_rss.py).
set -u
export LD_LIBRARY_PATH=$PWD/.devtree/lib
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
GW=$PWD/.devtree/bin/gpuwatch
TMUX_BIN="$PWD/.devtree/bin/tmux -S /tmp/gw-tmux.sock -f /dev/null"
SECONDS_EACH=${SECONDS_EACH:-60}
python3 tests/gpu/train_loop.py --seconds 600 --hold-gib 8 >/tmp/train.log 2>&1 &
TRAIN=$!
sleep 20  # torch up and stepping
[ -n "${SKIP_SCREENS:-}" ] || {
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,memory.used,utilization.gpu --format=csv
  for size in "80 24" "120 40"; do
    set -- $size
    $TMUX_BIN kill-server 2>/dev/null
    $TMUX_BIN new-session -d -s t -x $1 -y $2 "$GW top; sleep 600"
    sleep 15
    echo; echo "== gpuwatch top at ${1}x${2}, 15 s in"; $TMUX_BIN capture-pane -p -t t
    if [ "$1" = 120 ]; then
      p=$(pgrep -n -f "bin/gpuwatch top"); echo "== drawn by $(readlink /proc/$p/exe)"
      $TMUX_BIN send-keys -t t g Enter; sleep 2
      echo; echo "== the torch process's view (Enter)"; $TMUX_BIN capture-pane -p -t t
      $TMUX_BIN send-keys -t t Escape t; sleep 2
      echo; echo "== tree view (t)"; $TMUX_BIN capture-pane -p -t t
    fi
    $TMUX_BIN kill-server
  done
} > $OUT/top_h200_screens.txt 2>&1
dpkg -x .peers/nvtop_3.0.1-1_amd64.deb /tmp/nvtop
{
  echo "== ${SECONDS_EACH} s each at a 1 s refresh on a pseudo-terminal, torch job running"
  # Twice, in alternating order; and where each program's own memory goes
  # (smaps_rollup of its main process, 10 s before the end), the wrappers
  # (timeout, script, sh) being in every tree alike.
  for tool in ${TOOLS:-top nvtop nvitop watch nvitop nvtop top}; do
    case $tool in
      top) cmd="$GW top"; pat="gpuwatch top" ;;
      # top as it ran before gpuwatch-top: in gpuwatch-full, every command's libraries loaded.
      full) cmd="$GW-full top"; pat="gpuwatch-full top" ;;
      # A variant of gpuwatch-top carried beside it as gpuwatch-top-VARIANT.
      top-*) cmd="$GW-$tool top"; pat="gpuwatch-$tool top" ;;
      watch) cmd="$GW watch -q"; pat="gpuwatch watch" ;;
      nvtop) cmd="/tmp/nvtop/usr/bin/nvtop -d 10"; pat="nvtop -d" ;;
      nvitop) cmd="env PYTHONPATH=$PWD/.peers python3 -m nvitop --interval 1"; pat="m nvitop" ;;
    esac
    (sleep $((SECONDS_EACH - 10)); p=$(pgrep -n -f "^[^ ]*$pat|python3 -m nvitop" | head -1)
     [ "$tool" = nvitop ] || p=$(pgrep -n -f "$pat")
     echo "   $tool pid $p: $(grep -E '^(Rss|Pss_Anon|Pss_File|Anonymous)' /proc/$p/smaps_rollup | tr -s ' ' | tr '\n' ' ')"
     # Its mappings that hold the most (Rss KiB), the program's own file first among them.
     awk '/^[0-9a-f]+-[0-9a-f]+ /{n=$6; if(n=="")n="[anonymous]"} /^Rss:/{r[n]+=$2}
          END{for(k in r) print "     " r[k], k}' /proc/$p/smaps | sort -rn | head -16) &
    probe=$!
    python3 tests/gpu/cpu_rss.py "$tool" timeout $SECONDS_EACH script -qfc "stty cols 120 rows 40; exec $cmd" /dev/null
    wait $probe
  done
} > $OUT/top_h200_cost.txt 2>&1
kill $TRAIN 2>/dev/null
cat $OUT/top_h200_cost.txt; head -c 6000 $OUT/top_h200_screens.txt
