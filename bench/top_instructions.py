"""Instructions `gpuwatch top` and nvtop execute in a second of a session left
alone, on this machine's fake NVML, counted by callgrind (valgrind): their CPU
work where a 2-core VM's clock ticks (10 ms) are too coarse to tell builds apart.

Each program runs under callgrind in tmux on a 120x40 terminal at a 1 s refresh,
reading one scenario, twice at once: for SHORT and for LONG seconds, then `q`.
The difference of the two runs' instruction counts, over LONG - SHORT seconds,
is the work of a second once started (the start, the same in both, cancels
out). Everything the process runs counts: its own code, libc, ncurses and the
fake NVML's answers (the same library for every program, but nvtop asks it
other questions). Under valgrind a program runs some 30 to 50 times slower;
what a second of top costs on the fake (a few million instructions) still takes
well under a second there, so both runs see one refresh a second.

    python3 bench/top_instructions.py BUILD NVTOP [--also LABEL=GPUWATCH_TOP ...]
                                      [--short 20] [--long 80] [--scenario FILE]

BUILD: a build directory (gpuwatch-top, lib/libnvidia-ml-fake.so); NVTOP: the
nvtop binary, or its Debian package (nvtop_3.0.1-1_amd64.deb of the peers
folder, extracted to a temporary directory); --also: another gpuwatch-top
binary (another build of it), measured the same way in the same call.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from top_peers import also_binaries, nvtop_and_fake

HERE = os.path.dirname(os.path.abspath(__file__))


def need(tool):
    if shutil.which(tool) is None:
        sys.exit(f"top_instructions: {tool} is not installed (apt-get install {tool})")


def instructions(profile):
    """The instruction count (Ir) a callgrind output file totals."""
    with open(profile) as f:
        for line in f:
            m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    sys.exit(f"top_instructions: {profile} has no summary line")


def start(tmp, tag, argv, env, seconds):
    out = os.path.join(tmp, tag + ".callgrind")
    tmux = ["tmux", "-L", f"top-instructions-{os.getpid()}-{tag}", "-f", "/dev/null"]
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv
    errors = os.path.join(tmp, tag + ".stderr")
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", "120", "-y", "40",
                           " ".join(command) + " 2>" + errors], env=env, check=True)
    return {"tmux": tmux, "out": out, "errors": errors, "until": time.monotonic() + seconds}


def finish(run, label):
    time.sleep(max(0.0, run["until"] - time.monotonic()))
    tmux = run["tmux"]
    alive = subprocess.run(tmux + ["has-session"], stderr=subprocess.DEVNULL).returncode == 0
    if not alive:
        with open(run["errors"]) as f:
            said = "".join(l for l in f if not l.startswith("=="))
        sys.exit(f"top_instructions: {label} ended before it was told to:\n{said}")
    subprocess.run(tmux + ["send-keys", "-t", "t", "q"], check=False)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not os.path.exists(run["out"]):
        time.sleep(0.5)
    time.sleep(3)  # callgrind writes the file as the program exits
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL, check=False)
    if not os.path.exists(run["out"]):
        sys.exit(f"top_instructions: {label} left no profile (did it quit on q?)")
    return instructions(run["out"])


def measure(tmp, label, argv, env, short, long):
    tag = re.sub(r"[^A-Za-z0-9]+", "-", label)
    runs = [start(tmp, f"{tag}-short", argv, env, short),
            start(tmp, f"{tag}-long", argv, env, long)]
    short_ir, long_ir = finish(runs[0], label), finish(runs[1], label)
    return {"label": label, "short": short_ir, "long": long_ir,
            "per_s": (long_ir - short_ir) / (long - short)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("nvtop")
    parser.add_argument("--short", type=float, default=20)
    parser.add_argument("--long", type=float, default=80)
    parser.add_argument("--scenario",
                        default=os.path.join(HERE, "..", "scenarios", "test", "fixed.yaml"))
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=GPUWATCH_TOP",
                        help="another gpuwatch-top binary to measure beside the build's")
    args = parser.parse_args()
    if not 0 < args.short < args.long:
        parser.error("want 0 < --short < --long")
    top = os.path.realpath(os.path.join(args.build, "gpuwatch-top"))
    if not os.access(top, os.X_OK):
        parser.error(f"{top} does not exist (build gpuwatch-top)")
    programs = [("gpuwatch-top", top)] + also_binaries(parser, args.also)
    fake = os.path.realpath(os.path.join(args.build, "lib", "libnvidia-ml-fake.so"))
    if not os.path.exists(fake):
        parser.error(f"{fake} does not exist (build gpuwatch_fake_nvml)")
    for tool in ("valgrind", "tmux"):
        need(tool)
    with tempfile.TemporaryDirectory() as tmp:
        nvtop, libdir = nvtop_and_fake(tmp, args.nvtop, fake)
        env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
                   GPUWATCH_FAKE_SCENARIO=os.path.realpath(args.scenario), LD_LIBRARY_PATH=libdir)
        env.pop("NO_COLOR", None)
        results = [measure(tmp, "nvtop -d 10", [nvtop, "-d", "10"], env, args.short, args.long)]
        for label, path in programs:
            results.append(measure(tmp, label, [path, "top", "-i", "1s"], env, args.short,
                                   args.long))
    print(f"scenario {os.path.basename(args.scenario)}; runs of {args.short:.0f} s and "
          f"{args.long:.0f} s under callgrind; instructions (Ir)")
    print(f"{'program':18} {'short run':>14} {'long run':>14} {'a second':>12} {'/ nvtop':>8}")
    nv = results[0]["per_s"]
    for r in results:
        ratio = f"{r['per_s'] / nv:8.2f}" if nv > 0 else "     n/a"
        print(f"{r['label']:18} {r['short']:14,d} {r['long']:14,d} {r['per_s']:12,.0f} {ratio}")


if __name__ == "__main__":
    main()
