#!/usr/bin/env python3
"""`gpuwatch` (status) in a real terminal (tmux): a status taller than the
terminal is drawn one line per GPU, a tall one in full, and --full / --compact
override the choice; -l repeats it.

    status_tmux_test.py GPUWATCH_BINARY SOURCE_DIR
"""
import os
import shlex
import subprocess
import sys
import time

BIN, SRC = sys.argv[1], sys.argv[2]
DEMO = os.path.join(SRC, "scenarios", "demo.yaml")  # 8 GPUs: 54 lines in full
DEADLINE = 60  # seconds a screen may take to appear on 2 loaded cores


def screen_of(args, width, height, until):
    """Runs gpuwatch ARGS in a WIDTHxHEIGHT tmux pane; the screen once `until` holds."""
    name = "gwstatus-%d-%d" % (os.getpid(), time.monotonic_ns())
    tmux = ["tmux", "-L", name, "-f", "/dev/null"]
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.pop("NO_COLOR", None)
    command = " ".join(shlex.quote(a) for a in [BIN, "--scenario", DEMO] + args)
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                           "sh", "-c", command + "; echo EXIT=$?; sleep 600"],
                   env=env, check=True)
    try:
        end = time.monotonic() + DEADLINE
        while True:
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"],
                                    capture_output=True, text=True).stdout
            if until(screen):
                return screen
            if time.monotonic() > end:
                raise AssertionError("%s in %dx%d: timed out; screen:\n%s"
                                     % (args, width, height, screen))
            time.sleep(0.2)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)


def gpu_lines(screen):
    return [l for l in screen.splitlines() if l.startswith("GPU ")]


def expect(cond, what, screen):
    if not cond:
        raise AssertionError(what + "; screen:\n" + screen)


def main():
    done = lambda s: "EXIT=" in s
    short = screen_of([], 80, 24, done)
    lines = gpu_lines(short)
    expect("EXIT=0" in short, "exits 0", short)
    expect(len(lines) == 8, "one line per GPU on 80x24", short)
    expect("PID" not in short, "no process table", short)
    expect(all(len(l) <= 80 for l in lines), "every line fits 80 columns", short)
    expect("alice(" in lines[0], "GPU 0's holder named", short)
    expect("held: thermal" in lines[3], "GPU 3's throttling on its line", short)

    tall = screen_of([], 120, 80, done)
    expect("PID  USER" in tall, "the full status where it fits", tall)
    expect(len([l for l in tall.splitlines() if l.startswith("GPU ")]) == 8, "8 GPU blocks", tall)

    forced = screen_of(["--full"], 80, 24, done)
    expect("no processes" in forced and "EXIT=0" in forced,
           "--full on a short terminal scrolls the full status", forced)
    compact = screen_of(["--compact"], 120, 80, done)
    expect(len(gpu_lines(compact)) == 8 and "PID" not in compact, "--compact on a tall one",
           compact)

    looped = screen_of(["-l", "200ms"], 100, 40,
                       lambda s: len(gpu_lines(s)) >= 16)
    expect(looped.count("8 GPUs") >= 2, "-l repeats the compact status", looped)
    print("status_tmux_test: ok")


if __name__ == "__main__":
    main()
