"""Runs a command and reports the CPU use (seconds of CPU per second of wall
time) and peak RSS of its whole process tree, sampled with psutil (so a
wrapper such as `timeout` does not hide the program it runs).
Usage: cpu_rss.py LABEL CMD..."""
import subprocess
import sys
import time

import psutil

label, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
proc = psutil.Process(p.pid)
peak_rss, cpu = 0, 0.0
cpu_by_pid = {}
while p.poll() is None:
    try:
        tree = [proc] + proc.children(recursive=True)
        rss = 0
        for q in tree:
            try:
                rss += q.memory_info().rss
                t = q.cpu_times()
                cpu_by_pid[q.pid] = t.user + t.system
            except psutil.NoSuchProcess:
                pass
        peak_rss = max(peak_rss, rss)
    except psutil.NoSuchProcess:
        break
    time.sleep(0.2)
cpu = sum(cpu_by_pid.values())
wall = time.perf_counter() - t0
print(f"{label} cpu_percent={100 * cpu / wall:.2f} peak_rss_mib={peak_rss / 2**20:.1f} wall_s={wall:.1f}")
