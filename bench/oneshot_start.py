"""What the one-shot front saves: `gpuwatch` (status, query and select only)
against `gpuwatch-full` (every command; what `gpuwatch` was before), both from
BUILD, in one run on the fake NVML, warm (a daemon answering) and cold, with
a C++ program that only loads libfmt and libstdc++ as the floor of starting a
process here. Medians of alternating runs, in ms, and each front / full.

    python3 bench/oneshot_start.py BUILD [--runs N] [--before FRONT]

--before times another front binary (e.g. `gpuwatch` built at an earlier
commit) in the same alternation, beside a C program that only prints (the
floor of starting a process that loads libc alone).

BUILD holds gpuwatch, gpuwatch-full and lib/libnvidia-ml-fake.so (a release
build: cmake --preset release). The fake GPU is tests/integration/scenarios/
host-b.yaml (one H200, one process): what a warm answer carries on one GPU."""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QUERY = ["query", "--query-gpu=index,name,memory.used,memory.total,utilization.gpu,"
         "temperature.gpu,power.draw", "--format=csv"]


def floor_program(work):
    """A C++ program that prints a line with libfmt (which brings libstdc++)."""
    src = os.path.join(work, "floor.cc")
    exe = os.path.join(work, "floor")
    with open(src, "w") as f:
        f.write('#include <fmt/format.h>\nint main() { fmt::print("{}\\n", 1); }\n')
    subprocess.run(["g++", "-O2", src, "-o", exe, "-lfmt"], check=True)
    return exe


def c_floor_program(work):
    """A C program that prints a line: what starting any process costs here."""
    src = os.path.join(work, "floor.c")
    exe = os.path.join(work, "floor_c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\nint main(void) { printf("%d\\n", 1); return 0; }\n')
    subprocess.run(["gcc", "-O2", src, "-o", exe], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--before", help="another front binary, timed in the same runs")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    front, full = os.path.join(build, "gpuwatch"), os.path.join(build, "gpuwatch-full")
    work = tempfile.mkdtemp(prefix="gw-oneshot-")
    env = dict(os.environ, GPUWATCH_RUNTIME_DIR=work,
               GPUWATCH_NVML_LIBRARY=os.path.join(build, "lib", "libnvidia-ml-fake.so"),
               GPUWATCH_FAKE_SCENARIO=os.path.join(ROOT, "tests/integration/scenarios/host-b.yaml"))
    daemon = subprocess.Popen([full, "serve", "-i", "1s", "--listen", "127.0.0.1:0"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(work, "daemon.sock")):
                break
            time.sleep(0.1)
        time.sleep(2)
        rows = {
            "status, warm": [],
            "status --no-daemon (cold)": ["--no-daemon"],
            "query, warm": QUERY,
            "query --no-daemon (cold)": QUERY + ["--no-daemon"],
            "select, warm": ["select"],
            "--version": ["--version"],
        }
        floors = {"floor: a C++ program with libfmt": [floor_program(work)],
                  "floor: a C program": [c_floor_program(work)]}
        cmds = dict(floors)
        for name, args in rows.items():
            cmds[f"gpuwatch {name}"] = [front, *args]
            cmds[f"gpuwatch-full {name}"] = [full, *args]
            if a.before:
                cmds[f"before {name}"] = [os.path.abspath(a.before), *args]
        times = {k: [] for k in cmds}
        for cmd in cmds.values():
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        for _ in range(a.runs):
            for name, cmd in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
                times[name].append(time.perf_counter() - t0)
        med = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(f"median of {a.runs} alternating runs (ms); the daemon: gpuwatch-full serve -i 1s")
        for name in floors:
            print(f"  {name:44s} {med[name]:7.2f}")
        for name in rows:
            f, g = med[f"gpuwatch {name}"], med[f"gpuwatch-full {name}"]
            line = f"  {name:28s} gpuwatch {f:7.2f}  gpuwatch-full {g:7.2f}  ratio {f / g:.2f}"
            if a.before:
                b = med[f"before {name}"]
                line += f"  before {b:7.2f}  gpuwatch / before {f / b:.2f}"
            print(line)
    finally:
        daemon.terminate()
        daemon.wait(10)


if __name__ == "__main__":
    main()
