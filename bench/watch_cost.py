"""CPU and memory of `gpuwatch watch` at 1 Hz next to a plain C loop that
makes the same NVML calls for every GPU at the same rate (bench/nvml_c_loop.c),
both run at the same time over the same period.

    python3 bench/watch_cost.py BUILD_DIR [SECONDS] [--real] [--serve]

Default: the 8-GPU demo fleet through the fake NVML (scenarios/demo.yaml).
--real: the real driver (on a machine with GPUs). --serve: measure the daemon
(`gpuwatch serve -i 1s` on a loopback port, /metrics scraped every 15 s as
Prometheus would) instead of `watch`. --scenario FILE: the fake NVML driven by
FILE instead of the demo fleet (bench/fleet_scenario.py writes 8 GPUs x 64
processes). Prints, per program, the CPU use in % of one core (utime+stime
from /proc/PID/stat over wall time), the peak RSS (VmHWM), the RSS and the
thread count at the end (the steady state: the daemon idle between scrapes),
then the ratios gpuwatch / C loop."""
import os
import subprocess
import sys
import time

from httpload import free_port

build = sys.argv[1]
seconds = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 60
real = "--real" in sys.argv
scenario = sys.argv[sys.argv.index("--scenario") + 1] if "--scenario" in sys.argv else None
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = dict(os.environ)
env.pop("GPUWATCH_FAKE_TIME", None)
if not real:
    env["GPUWATCH_FAKE_SCENARIO"] = scenario or os.path.join(root, "scenarios", "demo.yaml")
    env["GPUWATCH_NVML_LIBRARY"] = os.path.join(build, "lib", "libnvidia-ml-fake.so")
ticks = os.sysconf("SC_CLK_TCK")
demo = [] if real else ["--scenario", scenario] if scenario else ["--demo"]
serve = "--serve" in sys.argv
serve_port = free_port()
gpuwatch_cmd = ([os.path.join(build, "gpuwatch"), *demo, "serve",
                 "-i", "1s", "--listen", f"127.0.0.1:{serve_port}"] if serve else
                [os.path.join(build, "gpuwatch"), *demo, "watch", "-i", "1s", "--duration", f"{seconds}s",
                 "--quiet"])
programs = {
    "gpuwatch serve -i 1s" if serve else "gpuwatch watch -i 1s": gpuwatch_cmd,
    "C loop, same calls, 1 Hz": [os.path.join(build, "bench", "nvml_c_loop"), str(seconds), "ok",
                                 "1000"],
}
started = time.time()
procs = {name: subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
         for name, cmd in programs.items()}
scrapes = []


def scraper():
    import urllib.request
    while all(p.poll() is None for p in procs.values()):
        time.sleep(15)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{serve_port}/metrics", timeout=5) as r:
                scrapes.append(len(r.read()))
        except OSError:
            pass


if serve:
    import threading
    threading.Thread(target=scraper, daemon=True).start()
last = {name: (0, 0, 0, 0) for name in programs}


def read(pid):
    """CPU ticks, peak RSS and RSS (KiB), threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = int(fields[11]) + int(fields[12])  # utime, stime (after state at index 0)
    status = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.split()
    return cpu, int(status["VmHWM"][0]), int(status["VmRSS"][0]), int(status["Threads"][0])


ended = {}
stopping = set()
while len(ended) < len(procs):
    for name, p in procs.items():
        if name in ended:
            continue
        try:
            cpu, hwm, rss, threads = read(p.pid)
            if name in stopping:  # shutting down: its RSS and threads are no longer the steady ones
                rss, threads = last[name][2], last[name][3]
            last[name] = (cpu, max(hwm, last[name][1]), rss, threads)
        except (FileNotFoundError, ProcessLookupError, IndexError, KeyError):
            # A zombie (exited, not yet reaped) still has its CPU times but no VmHWM.
            pass
        if serve and p.poll() is None and time.time() - started >= seconds and name not in stopping:
            stopping.add(name)
            p.terminate()  # the daemon runs until told; its stats were read just above
        if p.poll() is not None:
            ended[name] = time.time() - started
    time.sleep(0.25)

if serve:
    print(f"scrapes of /metrics: {len(scrapes)} (bytes each: {scrapes[-1] if scrapes else 0})")
results = {}
for name, p in procs.items():
    cpu, hwm, rss, threads = last[name]
    wall = ended[name]
    results[name] = (100.0 * cpu / ticks / wall, hwm / 1024.0)
    print(f"{name:28s} cpu_percent={results[name][0]:.3f} peak_rss_mib={results[name][1]:.1f} "
          f"end_rss_mib={rss / 1024.0:.1f} end_threads={threads} wall_s={wall:.1f} "
          f"exit={p.returncode}")
(gw_cpu, gw_rss), (c_cpu, c_rss) = results.values()
print(f"ratio cpu={gw_cpu / c_cpu if c_cpu else float('inf'):.2f} rss={gw_rss / c_rss:.2f}"
      f" (CPU is counted in clock ticks of 10 ms: runs shorter than a few minutes are coarse)")
