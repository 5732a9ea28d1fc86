"""Runs a command and reports its CPU use (seconds of CPU per second of wall
time) and peak RSS, sampled with psutil. Usage: cpu_rss.py LABEL CMD..."""
import subprocess
import sys
import time

import psutil

label, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
proc = psutil.Process(p.pid)
peak_rss, cpu = 0, 0.0
while p.poll() is None:
    try:
        peak_rss = max(peak_rss, proc.memory_info().rss)
        t = proc.cpu_times()
        cpu = t.user + t.system
    except psutil.NoSuchProcess:
        break
    time.sleep(0.2)
wall = time.perf_counter() - t0
print(f"{label} cpu_percent={100 * cpu / wall:.2f} peak_rss_mib={peak_rss / 2**20:.1f} wall_s={wall:.1f}")
