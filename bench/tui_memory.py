"""`gpuwatch top` beside nvtop on the same simulated GPUs, on this machine.

Both load the fake NVML library as libnvidia-ml.so.1 (a directory holding
that name first on LD_LIBRARY_PATH; tests/fake_nvml/nvml_peer_calls.cc has the
two entry points nvtop needs that gpuwatch does not), read one scenario, and
draw at a 1 s refresh on a pseudo-terminal (script(1), 120x40), one after the
other. For each: CPU per second of wall time over the run, and the program's
own process's memory at the end (/proc/PID/smaps_rollup: Rss, anonymous,
file-backed Pss), with the mappings that hold the most. Issue 15's bound is
top's RSS against nvtop's; on the GPU machine tests/gpu/run_top_h200.sh
measures it with the real driver.

    python3 bench/tui_memory.py BUILD NVTOP [--seconds 30] [--scenario FILE]
                                [--also LABEL=GPUWATCH_TOP ...]

BUILD: a build directory (gpuwatch, gpuwatch-top, lib/libnvidia-ml-fake.so; its
gpuwatch-full too, for the row of the way top ran before gpuwatch-top, left out
when BUILD has none); NVTOP: the nvtop binary, or its Debian package,
nvtop_3.0.1-1_amd64.deb of the peers folder (extracted to a temporary
directory). --also adds a row for another gpuwatch-top binary (another build
or layout of it), run the same way.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

from proc_status import cpu_seconds
from top_peers import also_binaries, nvtop_and_fake

HERE = os.path.dirname(os.path.abspath(__file__))


def descendants(pid):
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children[ppid].append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children[p])
    return out


def find_program(root_pid, exes, deadline):
    """The process of the tree under `root_pid` that runs one of `exes`."""
    exes = {os.path.realpath(e) for e in exes}
    while time.monotonic() < deadline:
        for pid in descendants(root_pid):
            try:
                if os.path.realpath(f"/proc/{pid}/exe") in exes:
                    return pid
            except OSError:
                pass
        time.sleep(0.05)
    return None


def memory(pid):
    rollup = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                rollup[parts[0].rstrip(":")] = int(parts[1])
    by_mapping = collections.Counter()
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
            if head:
                current = head.group(1) or "[anonymous]"
            elif line.startswith("Rss:"):
                by_mapping[current] += int(line.split()[1])
    return rollup, by_mapping


def measure(label, argv, env, seconds, exes):
    with tempfile.NamedTemporaryFile() as typescript:
        shell = subprocess.Popen(
            ["script", "-qfc", " ".join(argv), typescript.name],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            pid = find_program(shell.pid, exes, time.monotonic() + 10)
            if pid is None:
                sys.exit(f"tui_memory: {label} did not start ({' '.join(argv)})")
            start_cpu, start = cpu_seconds(pid), time.monotonic()
            time.sleep(seconds)
            cpu = (cpu_seconds(pid) - start_cpu) / (time.monotonic() - start)
            rollup, by_mapping = memory(pid)
            if os.path.getsize(typescript.name) < 1000:
                sys.exit(f"tui_memory: {label} drew nothing on its terminal")
        finally:
            for p in reversed(descendants(shell.pid)):
                try:
                    os.kill(p, 15)
                except OSError:
                    pass
            shell.wait(timeout=10)
    return {"label": label, "cpu": cpu, "rss": rollup["Rss"], "anon": rollup["Anonymous"],
            "file_pss": rollup.get("Pss_File", 0), "mappings": by_mapping}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("nvtop")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--scenario",
                        default=os.path.join(HERE, "..", "scenarios", "test", "fixed.yaml"))
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=GPUWATCH_TOP",
                        help="another gpuwatch-top binary to measure beside the build's")
    args = parser.parse_args()
    also = also_binaries(parser, args.also)
    gpuwatch = os.path.join(args.build, "gpuwatch")
    fake = os.path.realpath(os.path.join(args.build, "lib", "libnvidia-ml-fake.so"))
    with tempfile.TemporaryDirectory() as tmp:
        nvtop, libdir = nvtop_and_fake(tmp, args.nvtop, fake)
        env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40",
                   GPUWATCH_FAKE_SCENARIO=os.path.realpath(args.scenario),
                   LD_LIBRARY_PATH=libdir + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
        env.pop("NO_COLOR", None)
        # `gpuwatch top` runs as gpuwatch-top (the front starts it in its place);
        # gpuwatch-full's own top, every command's libraries loaded, is the way it
        # ran before gpuwatch-top.
        runs = [measure("nvtop -d 10", [nvtop, "-d", "10"], env, args.seconds, [nvtop]),
                measure("gpuwatch top", [gpuwatch, "top", "-i", "1s"], env, args.seconds,
                        [gpuwatch, gpuwatch + "-top", gpuwatch + "-full"]),
        ]
        if os.access(gpuwatch + "-full", os.X_OK):
            runs.append(measure("gpuwatch-full top", [gpuwatch + "-full", "top", "-i", "1s"], env,
                                args.seconds, [gpuwatch + "-full"]))
        else:
            print(f"tui_memory: no {gpuwatch}-full: its row is left out")
        for label, path in also:
            runs.append(measure(label, [path, "top", "-i", "1s"], env, args.seconds, [path]))
    print(f"scenario {os.path.basename(args.scenario)}, {args.seconds:.0f} s each, own process")
    print(f"{'program':18} {'CPU %':>7} {'Rss MiB':>8} {'anon':>6} {'file Pss':>9}")
    for r in runs:
        print(f"{r['label']:18} {100 * r['cpu']:7.2f} {r['rss'] / 1024:8.1f} "
              f"{r['anon'] / 1024:6.1f} {r['file_pss'] / 1024:9.1f}")
    nv = runs[0]
    for gw in runs[1:]:
        cpu_ratio = (f"{gw['cpu'] / nv['cpu']:.2f}" if nv["cpu"] > 0
                     else "n/a (nvtop: under a clock tick)")
        print(f"{gw['label']} / nvtop: Rss {gw['rss'] / nv['rss']:.2f}, CPU {cpu_ratio}")
    for r in runs:
        print(f"\n{r['label']}: the mappings that hold the most (Rss KiB)")
        for name, kib in r["mappings"].most_common(12):
            print(f"  {kib:7d}  {name}")


if __name__ == "__main__":
    main()
