#!/usr/bin/env bash
# The functions gpuwatch-top runs on a real GPU, for its layout
# (scripts/top_layout.py reads tests/gpu/profiles/): through the device tool, carrying
# .devtree with bin/gpuwatch-top-prof (gpuwatch-top unstripped, for the names),
# bin/tmux and lib/ as for run_top_h200.sh, and vg/ (valgrind.bin,
# callgrind-amd64-linux, vgpreload_core-amd64-linux.so, default.supp from this
# machine's valgrind). Beside the torch training loop, two sessions of top run
# under callgrind at once, each at 120x40 and a 1 s refresh:
#  - $OUT/idle.callgrind: left alone for 75 s, as top mostly is (the session
#    whose code scripts/top_layout.py puts first);
#  - $OUT/keys.callgrind: shows the torch process's own view, its environment,
#    the tree and the help, and quits.
# Copy them to tests/gpu/profiles/GPU.idle.callgrind.gz and GPU.keys.callgrind.gz.
set -u
export LD_LIBRARY_PATH=$PWD/.devtree/lib VALGRIND_LIB=$PWD/.devtree/vg
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
T="$PWD/.devtree/bin/tmux -S /tmp/gw-prof.sock -f /dev/null"
python3 tests/gpu/train_loop.py --seconds 300 --hold-gib 8 >/tmp/train.log 2>&1 &
TRAIN=$!
sleep 20
for session in idle keys; do
  $T new-session -d -s $session -x 120 -y 40 "$PWD/.devtree/vg/valgrind.bin --tool=callgrind \
    --demangle=no --callgrind-out-file=$OUT/$session.callgrind $PWD/.devtree/bin/gpuwatch-top-prof \
    top -i 1s 2>$OUT/$session.valgrind.err"
done
sleep 75
$T capture-pane -p -t idle > $OUT/screen.txt
$T send-keys -t idle q
for k in g Enter; do $T send-keys -t keys $k; sleep 4; done
$T capture-pane -p -t keys >> $OUT/screen.txt
for k in e Escape Escape t; do $T send-keys -t keys $k; sleep 4; done
for k in t h Escape q; do $T send-keys -t keys $k; sleep 4; done
for _ in $(seq 30); do $T has-session 2>/dev/null || break; sleep 1; done
$T kill-server 2>/dev/null
kill $TRAIN 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -la $OUT; tail -n 3 $OUT/*.valgrind.err
