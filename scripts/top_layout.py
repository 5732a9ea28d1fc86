"""The code `gpuwatch top` runs, laid out together in gpuwatch-top.

A file-backed page is resident once anything on it runs, and the kernel maps a
fault's neighbours with it (fault-around, 64 KiB), so a binary whose executed
functions are scattered over its text is resident almost whole. gpuwatch-top
is linked by lld with src/cli/top_layout.txt as its symbol ordering file
(CMakeLists.txt, src/cli/CMakeLists.txt): the functions listed there come
first in .text, in the order listed, and what top never runs stays on pages
it never touches.

This script writes that list, or checks it against the build. It runs the
built gpuwatch-top under callgrind (valgrind) in tmux on the fake NVML library
(the same NVML calls as on a GPU), through workloads that a day of `top` goes
through: this machine's GPUs with every key of the main screen, the process
view and the help, MIG, fields the driver does not support, a lost GPU, Xid
errors, the demo fleet with its alerts, leaks and forecasts, an 80x24
terminal; adds the profiles taken on real GPUs in tests/gpu/profiles/
(tests/gpu/top_profile.sh, through the device tool: what the driver's answers
reach and the fake's do not); and keeps the functions of gpuwatch-top that ran
(mangled names, as lld reads them). First those a session left alone runs:
what a session on a GPU left alone ran (GPU.idle.callgrind.gz: top is mostly
watched, not driven) and what every workload here ran; then those the keys
added on the GPU (GPU.keys.callgrind.gz); then the rest. A function that
appears in no workload but runs on some GPU costs at most one 64 KiB window;
one listed but renamed since is ignored by the linker.

    python3 scripts/top_layout.py BUILD            # rewrites src/cli/top_layout.txt
    python3 scripts/top_layout.py BUILD --check    # how much of what top runs is laid out

BUILD: a build directory with gpuwatch-top and lib/libnvidia-ml-fake.so.
--check runs the first workload only and prints the share of the code it ran
(bytes, from nm) that the list holds, the 64 KiB windows of .text that code
spans, and the functions that ran outside the list on windows of their own; it
exits 1 when under --min-share (default 0.9) or when there are such functions.
"""
import argparse
import collections
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
LAYOUT = os.path.join(SOURCE, "src", "cli", "top_layout.txt")
PROFILES = os.path.join(SOURCE, "tests", "gpu", "profiles")
WINDOW = 64 * 1024

# (name, arguments, scenario or None, terminal size, seconds before the keys, keys)
# Keys are tmux send-keys names; ("sleep", s) waits. Everything runs ~30x slower
# under callgrind, so every wait is generous; still, run it on an idle machine:
# under load fewer samples are taken, and the demo's leak reports, which need
# a minute of them, may not come.
MAIN_KEYS = [
    "<", ">", ">", "r", "r", "j", "j", "k", "NPage", "PPage", "End", "Home", "G", "g",
    "t", ("sleep", 3), "t", "/", "p", "y", "Enter", ("sleep", 3), "Escape", "/", "x", "BSpace",
    "Escape", "w", ("sleep", 2), "w", "1", ("sleep", 2), "0", "Space", "a", "u", "Tab",
    "BTab", "Enter", ("sleep", 4), "e", ("sleep", 3), "Escape", "Escape", "T", ("sleep", 2),
    "n", "h", ("sleep", 3), "Escape", ("sleep", 3),
]
WORKLOADS = [
    ("local", ["-i", "1s"], "scenarios/test/fixed.yaml", (120, 40), 40, MAIN_KEYS),
    ("compact", ["-i", "1s"], "scenarios/test/fixed.yaml", (80, 24), 25, ["Enter", ("sleep", 3)]),
    ("mig", ["-i", "1s"], "scenarios/test/mig.yaml", (120, 40), 25, []),
    ("unsupported", ["-i", "1s"], "scenarios/test/unsupported.yaml", (120, 40), 25, []),
    ("lost", ["-i", "1s"], "scenarios/test/lost.yaml", (120, 40), 25, []),
    ("xid", ["-i", "1s"], "scenarios/test/xid.yaml", (120, 40), 25, []),
    ("demo", ["--demo", "-i", "1s"], None, (160, 48), 90, ["j", "Enter", ("sleep", 3), "Escape"]),
]


def need(tool):
    if shutil.which(tool) is None:
        sys.exit(f"top_layout: {tool} is not installed (apt-get install {tool})")


def run_workload(build, tmp, workload):
    name, args, scenario, (width, height), settle, keys = workload
    out = os.path.join(tmp, name + ".callgrind")
    nvml = os.path.join(tmp, "nvml")
    if not os.path.isdir(nvml):
        os.mkdir(nvml)
        fake = os.path.realpath(os.path.join(build, "lib", "libnvidia-ml-fake.so"))
        for link in ("libnvidia-ml.so.1", "libnvidia-ml.so"):
            os.symlink(fake, os.path.join(nvml, link))
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               LD_LIBRARY_PATH=nvml)
    env.pop("NO_COLOR", None)
    if scenario:
        env["GPUWATCH_FAKE_SCENARIO"] = os.path.join(SOURCE, scenario)
    top = os.path.realpath(os.path.join(build, "gpuwatch-top"))
    command = ["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out,
               top, "top"] + args
    tmux = ["tmux", "-L", f"top-layout-{os.getpid()}-{name}", "-f", "/dev/null"]
    errors = os.path.join(tmp, name + ".stderr")
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                           " ".join(command) + " 2>" + errors], env=env, check=True)
    try:
        time.sleep(settle)
        if subprocess.run(tmux + ["has-session"], stderr=subprocess.DEVNULL).returncode != 0:
            with open(errors) as f:
                said = "".join(l for l in f if not l.startswith("=="))
            sys.exit(f"top_layout: gpuwatch-top ended before workload {name}'s keys:\n{said}")
        for key in keys + ["q", ("sleep", 2), "q"]:
            if isinstance(key, tuple):
                time.sleep(key[1])
            else:
                subprocess.run(tmux + ["send-keys", "-t", "t", key], stderr=subprocess.DEVNULL,
                               check=False)
                time.sleep(0.7)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not os.path.exists(out):
            time.sleep(0.5)
        time.sleep(2)  # callgrind writes the file as the program exits
    finally:
        subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL, check=False)
    if not os.path.exists(out):
        sys.exit(f"top_layout: workload {name} left no profile (did gpuwatch-top start?)")
    return out


def functions_run(profile):
    """The functions of gpuwatch-top (any file named gpuwatch-top*) that ran, by
    callgrind's profile."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", profile],
                          capture_output=True, text=True, check=True).stdout
    names = set()
    for line in text.splitlines():
        m = re.match(r"^(.*) \[([^\]]*)\]$", line)
        if not m or not os.path.basename(m.group(2)).startswith("gpuwatch-top"):
            continue
        m = re.match(r"^\s*[\d,]+\s+(?:\([\s\d.%]+\)\s+)?[^:]*:(.*)$", m.group(1))
        if not m:
            continue
        name = re.sub(r"'\d+$", "", m.group(1).strip())  # callgrind's recursion depth mark
        if name and not name.startswith("0x") and not name.startswith("("):
            names.add(name)
    return names


def text_symbols(binary):
    """{mangled name: (address, size)} of the binary's functions."""
    out = subprocess.run(["nm", "-S", "-t", "d", binary], capture_output=True, text=True,
                         check=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols[parts[3]] = (int(parts[0]), int(parts[1]))
    return symbols


def read_layout(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def write_layout(path, runs, idle, on_gpu):
    """The functions that ran, in three parts: those a session left alone
    runs (`idle`: on a real GPU, and in every workload), then the rest of
    what sessions on a GPU ran (`on_gpu`: the keys' code), then what only the
    fake's workloads reached (a lost GPU, MIG, Xid errors). A session left
    alone is what top is for: its code then spans as few 64 KiB windows as
    its size needs, where the keys' code or the fake's would interleave with
    it. Within each part, those that ran in more workloads first."""
    with open(path, "w") as f:
        f.write("# gpuwatch-top's symbol ordering file (lld --symbol-ordering-file): the\n"
                "# functions `gpuwatch top` runs, laid out first so that it touches as few\n"
                "# pages of its binary as the code it runs needs. Written by\n"
                "# scripts/top_layout.py, which says how; rewrite it when top's code moves.\n")
        f.write("_start\n")  # the entry point, which callgrind reports as no function
        def part(n):
            return 0 if n in idle else 1 if n in on_gpu else 2

        for n in sorted(runs, key=lambda n: (part(n), -runs[n], n)):
            f.write(n + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--min-share", type=float, default=0.9)
    parser.add_argument("--layout", default=LAYOUT)
    args = parser.parse_args()
    for tool in ("valgrind", "tmux", "nm"):
        need(tool)
    binary = os.path.realpath(os.path.join(args.build, "gpuwatch-top"))
    fake = os.path.join(args.build, "lib", "libnvidia-ml-fake.so")
    for path in (binary, fake):
        if not os.path.exists(path):
            sys.exit(f"top_layout: {path} does not exist (build gpuwatch-top and "
                     "gpuwatch_fake_nvml first)")
    workloads = WORKLOADS[:1] if args.check else WORKLOADS
    runs = collections.Counter()  # function: how many workloads ran it
    on_gpu = set()  # functions a session on a real GPU ran
    with tempfile.TemporaryDirectory() as tmp:
        for w in workloads:
            names = functions_run(run_workload(args.build, tmp, w))
            print(f"{w[0]:12} {len(names):5d} functions of gpuwatch-top ran", file=sys.stderr)
            runs.update(names)
        # What every workload ran (start, sampling, drawing) is what a session
        # left alone runs, also where the GPU's profile was taken of another
        # build of top and names some functions otherwise (-Os calls what -O3
        # inlines).
        idle = {n for n in runs if runs[n] == len(workloads)}
        if not args.check:
            # Profiles taken on real GPUs (tests/gpu/top_profile.sh): what the
            # driver's answers reach and the fake's do not.
            for path in sorted(glob.glob(os.path.join(PROFILES, "*.callgrind.gz"))):
                unpacked = os.path.join(tmp, os.path.basename(path)[:-3])
                with gzip.open(path, "rb") as src, open(unpacked, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                names = functions_run(unpacked)
                print(f"{os.path.basename(path)}: {len(names)} functions of gpuwatch-top ran",
                      file=sys.stderr)
                runs.update(names)
                on_gpu |= names
                if path.endswith(".idle.callgrind.gz"):
                    idle |= names
    ran = set(runs)
    symbols = text_symbols(binary)
    if not args.check:
        write_layout(args.layout, runs, idle, on_gpu)
        size = sum(symbols.get(n, (0, 0))[1] for n in ran)
        print(f"{args.layout}: {len(ran)} functions, {size} bytes")
        return 0
    listed = set(read_layout(args.layout))
    ran_bytes = sum(symbols[n][1] for n in ran if n in symbols)
    laid_out = sum(symbols[n][1] for n in ran if n in symbols and n in listed)
    windows = {symbols[n][0] // WINDOW for n in ran if n in symbols}
    share = laid_out / ran_bytes if ran_bytes else 0.0
    print(f"ran {len(ran)} functions, {ran_bytes} bytes; in the layout: {share:.1%} of the bytes; "
          f"64 KiB windows of .text they touch: {len(windows)} "
          f"(the code alone needs {-(-ran_bytes // WINDOW)})")
    # A small function left out costs little in bytes but a whole window: new
    # code that top runs at start, say, until the list is written again.
    inside = {symbols[n][0] // WINDOW for n in ran if n in symbols and n in listed}
    outside = sorted((symbols[n][0], n) for n in ran
                     if n in symbols and n not in listed and symbols[n][0] // WINDOW not in inside)
    if outside:
        extra = len({address // WINDOW for address, _ in outside})
        print(f"{len(outside)} functions that ran are not in the list and add {extra} windows "
              f"({extra * WINDOW // 1024} KiB) of their own; write the list again:")
        for _, name in outside[:20]:
            print(f"  {name}")
    return 0 if share >= args.min_share and not outside else 1


if __name__ == "__main__":
    sys.exit(main())
