"""gpuwatch against nvidia-smi, pynvml, nvitop and gpustat in one run on a
real GPU (issue 17, item 6): one-shot answers warm (a daemon running) and
cold, the daemon's steady cost at 1 Hz beside the other collectors, and
/metrics under load. Prints one table per part, with ratios.

    python3 bench/side_by_side.py GPUWATCH [--peers DIR] [--runs N] [--seconds S]
        [--c-loop PATH]

GPUWATCH: the binary. --peers: the folder holding nvitop and gpustat's
sources (the peers folder beside the repository, carried as .peers). --runs: alternating runs per
one-shot command (default 20; nvitop and gpustat a quarter of it, they are
slow). --seconds: the steady-cost window (default 120). --c-loop: the plain
C loop (bench/nvml_c_loop) to run beside the daemon as well.

Warm answers come from `gpuwatch serve -i 1s` started here with its own
runtime directory; the same daemon is the one measured at 1 Hz afterwards,
its CPU counted over the window only. Every one-shot output of the warm
path is checked against --no-daemon's (the status's clock line aside)."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httpload import free_port, load, wait_http, wrk  # noqa: E402
from proc_status import cpu_seconds, status_kib  # noqa: E402

FIELDS = ("index,uuid,name,serial,driver_version,pci.bus_id,pstate,temperature.gpu,"
          "temperature.memory,utilization.gpu,utilization.memory,memory.total,memory.used,"
          "memory.free,memory.reserved,power.draw,power.limit,enforced.power.limit,clocks.sm,"
          "clocks.mem,clocks.gr,clocks.max.sm,fan.speed,compute_mode,persistence_mode,"
          "ecc.errors.uncorrected.volatile.total,pcie.link.gen.current,timestamp")
# What select reads to choose (select::SelectionFields), as nvidia-smi names it.
SELECT_FIELDS = "index,uuid,name,mig.mode.current,memory.total,memory.used,memory.free,utilization.gpu"
PEERS = ("nvitop -1", "gpustat")


def run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-500:]}")
    return elapsed, p.stdout.decode(errors="replace")


def one_shots(gw, peers_env, env, runs, before=None):
    """Alternating runs of every one-shot command; medians in ms."""
    q = f"--query-gpu={FIELDS}"
    cmds = {
        "nvidia-smi --query-gpu (28 fields)": (["nvidia-smi", q, "--format=csv"], runs),
        "gpuwatch query, warm": ([gw, "query", q, "--format=csv"], runs),
        "gpuwatch query --no-daemon (cold)": ([gw, "query", "--no-daemon", q, "--format=csv"], runs),
        "nvidia-smi (table)": (["nvidia-smi"], runs),
        "gpuwatch, warm": ([gw, "--color=never"], runs),
        "gpuwatch --no-daemon (cold)": ([gw, "--no-daemon", "--color=never"], runs),
        "nvidia-smi --query-gpu (select's fields)": (
            ["nvidia-smi", f"--query-gpu={SELECT_FIELDS}", "--format=csv"], runs),
        "gpuwatch select, warm": ([gw, "select"], runs),
        "gpuwatch select --no-daemon (cold)": ([gw, "select", "--no-daemon"], runs),
        "gpuwatch --version (process start)": ([gw, "--version"], runs),
    }
    # The same warm answers from the executable that holds every command (what
    # `gpuwatch` was before the one-shot front): what the front saves.
    full = os.path.join(os.path.dirname(gw), "gpuwatch-full")
    if os.path.exists(full):
        cmds["gpuwatch-full query, warm"] = ([full, "query", q, "--format=csv"], runs)
        cmds["gpuwatch-full, warm"] = ([full, "--color=never"], runs)
        cmds["gpuwatch-full --version (process start)"] = ([full, "--version"], runs)
    # Another front binary (e.g. built at an earlier commit), in the same runs.
    if before:
        cmds["before: query, warm"] = ([before, "query", q, "--format=csv"], runs)
        cmds["before: status, warm"] = ([before, "--color=never"], runs)
        cmds["before: query --no-daemon (cold)"] = (
            [before, "query", "--no-daemon", q, "--format=csv"], runs)
        cmds["before: status --no-daemon (cold)"] = ([before, "--no-daemon", "--color=never"], runs)
        cmds["before: select --no-daemon (cold)"] = ([before, "select", "--no-daemon"], runs)
        cmds["before: --version"] = ([before, "--version"], runs)
    if peers_env is not None:
        cmds["nvitop -1"] = ([sys.executable, "-m", "nvitop", "-1"], max(3, runs // 4))
        cmds["gpustat"] = ([sys.executable, "-m", "gpustat", "--no-color"], max(3, runs // 4))
    times = {name: [] for name in cmds}
    for name, (cmd, _) in cmds.items():  # warm the page cache
        run(cmd, peers_env if name in PEERS else env)
    for i in range(runs):
        for name, (cmd, n) in cmds.items():
            if i < n:
                t, _ = run(cmd, peers_env if name in PEERS else env)
                times[name].append(t)
    return {name: 1000 * statistics.median(t) for name, t in times.items()}


def shape(text):
    """`text` with its numbers masked and its runs of spaces as one: a live GPU
    changes between two reads, and a column right-aligns a wider number."""
    return re.sub(r" +", " ", re.sub(r"\d+(\.\d+)?", "#", text))


def same_outputs(gw, env):
    """Warm and cold outputs, compared numbers aside (a status's first line is
    its clock): the same fields, rows, units, words and layout. The exact
    values are compared on the fake NVML (tests/cli/warm_answer_test.cc)."""
    q = ["query", "--query-gpu=" + FIELDS.replace(",timestamp", ""), "--format=csv"]
    checks = []
    for name, args, skip_first in [("query", q, False), ("status", ["--color=never"], True),
                                   ("select", ["select"], False)]:
        _, warm = run([gw, *args], env)
        _, cold = run([gw, "--no-daemon", *args], env)
        if skip_first:
            warm, cold = warm.split("\n", 1)[1], cold.split("\n", 1)[1]
        checks.append((name, shape(warm) == shape(cold), warm, cold))
    return checks


def steady_costs(collectors, seconds, port):
    """CPU (% of a core) of each collector over the same window, its RSS now
    and at its peak, and its threads at the end."""
    start = {}
    for name, pid in collectors.items():
        try:
            start[name] = cpu_seconds(pid)
        except OSError:
            print(f"  {name}: exited before the window (see its own output)")
    collectors = {name: pid for name, pid in collectors.items() if name in start}
    scrapes = []
    stop = time.time() + seconds

    def scraper():  # as Prometheus would, every 15 s
        import urllib.request
        while True:
            time.sleep(min(15, max(0, stop - time.time())))
            if time.time() >= stop:
                return
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                scrapes.append(len(r.read()))

    t = threading.Thread(target=scraper)
    t.start()
    t0 = time.time()
    time.sleep(seconds)
    wall = time.time() - t0
    t.join()
    rows = {}
    for name, pid in collectors.items():
        try:
            cpu = cpu_seconds(pid) - start[name]
        except OSError:
            print(f"  {name}: exited during the window")
            continue
        rows[name] = (100 * cpu / wall, status_kib(pid, "VmRSS") / 1024,
                      status_kib(pid, "VmHWM") / 1024, len(os.listdir(f"/proc/{pid}/task")))
    return rows, scrapes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuwatch")
    ap.add_argument("--peers")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--c-loop")
    ap.add_argument("--front-before", help="another gpuwatch front, timed in the same runs")
    a = ap.parse_args()
    gw = os.path.abspath(a.gpuwatch)
    runtime = tempfile.mkdtemp(prefix="gw-side-")
    env = dict(os.environ, GPUWATCH_RUNTIME_DIR=runtime)
    peers_env = dict(env, PYTHONPATH=os.path.abspath(a.peers)) if a.peers else None
    port = free_port()
    daemon = subprocess.Popen([gw, "serve", "-i", "1s", "--listen", f"127.0.0.1:{port}",
                               "--process-metrics"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_http(port, "/metrics")
        for _ in range(100):
            if os.path.exists(os.path.join(runtime, "daemon.sock")):
                break
            time.sleep(0.1)
        time.sleep(3)

        print(f"== 1, 2. one-shot answers: median of {a.runs} alternating runs (ms)")
        before = os.path.abspath(a.front_before) if a.front_before else None
        t = one_shots(gw, peers_env, env, a.runs, before)
        for name, ms in t.items():
            print(f"  {name:40s} {ms:8.2f}")
        smi_q, smi_t = t["nvidia-smi --query-gpu (28 fields)"], t["nvidia-smi (table)"]
        print("  ratios (goals: warm <= 0.1, cold query <= 0.9, cold status <= 1.0):")
        print(f"    warm query / nvidia-smi --query-gpu   {t['gpuwatch query, warm'] / smi_q:.3f}")
        print(f"    warm status / nvidia-smi              {t['gpuwatch, warm'] / smi_t:.3f}")
        smi_s = t["nvidia-smi --query-gpu (select's fields)"]
        print(f"    warm select / nvidia-smi, its fields  {t['gpuwatch select, warm'] / smi_s:.3f}")
        print("    cold query / nvidia-smi --query-gpu   "
              f"{t['gpuwatch query --no-daemon (cold)'] / smi_q:.3f}")
        print("    cold status / nvidia-smi              "
              f"{t['gpuwatch --no-daemon (cold)'] / smi_t:.3f}")
        print("    cold select / nvidia-smi, its fields  "
              f"{t['gpuwatch select --no-daemon (cold)'] / smi_s:.3f}")
        if "gpuwatch-full query, warm" in t:
            print("    gpuwatch-full warm query / nvidia-smi --query-gpu (before the front) "
                  f"{t['gpuwatch-full query, warm'] / smi_q:.3f}")
            print("    gpuwatch-full warm status / nvidia-smi (before the front)            "
                  f"{t['gpuwatch-full, warm'] / smi_t:.3f}")
        if before:
            for what in ("query, warm", "status, warm", "query --no-daemon (cold)",
                         "status --no-daemon (cold)", "select --no-daemon (cold)"):
                mine = {"query, warm": "gpuwatch query, warm", "status, warm": "gpuwatch, warm",
                        "query --no-daemon (cold)": "gpuwatch query --no-daemon (cold)",
                        "status --no-daemon (cold)": "gpuwatch --no-daemon (cold)",
                        "select --no-daemon (cold)": "gpuwatch select --no-daemon (cold)"}[what]
                print(f"    {what:28s} gpuwatch / before {t[mine] / t['before: ' + what]:.3f}")
        for name, same, warm, cold in same_outputs(gw, env):
            print(f"  warm {name} output == cold, numbers aside: {same}")
            if not same:
                print("--- warm\n" + warm + "--- cold\n" + cold)

        print(f"\n== 3. at 1 Hz for {a.seconds} s, side by side (CPU % of one core; RSS MiB "
              "now / peak; threads)")
        here = os.path.dirname(os.path.abspath(__file__))
        others = {
            "pynvml loop, same calls": [sys.executable, os.path.join(here, "pynvml_loop.py"),
                                        str(a.seconds + 30)],
            "nvidia-smi -l 1": ["nvidia-smi", "-l", "1"],
        }
        if a.c_loop:
            others["C loop, same calls"] = [a.c_loop, str(a.seconds + 30), "ok", "1000"]
        if peers_env is not None:
            others["nvitop ResourceMetricCollector"] = [
                sys.executable, "-c",
                "import time, nvitop\n"
                "c = nvitop.ResourceMetricCollector(interval=1.0)\n"
                "c.daemonize(on_collect=lambda metrics: True, interval=1.0)\n"
                f"time.sleep({a.seconds + 30})\n"]
        procs = {name: subprocess.Popen(cmd, env=peers_env or env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                 for name, cmd in others.items()}
        time.sleep(5)  # past their start
        collectors = {"gpuwatch serve -i 1s": daemon.pid, **{k: p.pid for k, p in procs.items()}}
        rows, scrapes = steady_costs(collectors, a.seconds, port)
        for p in procs.values():
            p.kill()
        for name, (cpu, rss, peak, threads) in rows.items():
            print(f"  {name:34s} {cpu:7.3f} %  {rss:6.1f} / {peak:6.1f} MiB  {threads:3d} threads")
        ref = rows.get("pynvml loop, same calls")
        gwr = rows["gpuwatch serve -i 1s"]
        if ref and ref[0] > 0 and ref[1] > 0:
            print(f"  gpuwatch / pynvml loop: CPU {gwr[0] / ref[0]:.2f}, RSS {gwr[1] / ref[1]:.2f}"
                  f" ({len(scrapes)} scrapes of {scrapes[-1] if scrapes else 0} bytes)")

        print("\n== 4. /metrics with --process-metrics: 8 connections for 10 s, then 1 for 4 s")
        for clients, seconds in ((8, 10), (1, 4)):
            if shutil.which("wrk"):  # Python's clients cannot load a server this fast
                r = wrk(port, seconds, clients, ["Accept-Encoding: gzip"])
                how = "wrk, gzip"
            else:
                r = load(port, "/metrics", seconds, clients)
                how = "Python http.client, no wrk here: the client may be the limit"
            print(f"  {clients} client(s): {r['rps']:.0f} scrapes/s, p50 {r['p50_ms']:.3f} ms, "
                  f"p99 {r['p99_ms']:.3f} ms ({r['requests']} scrapes; {how})")
    finally:
        daemon.terminate()
        daemon.wait(10)


if __name__ == "__main__":
    main()
