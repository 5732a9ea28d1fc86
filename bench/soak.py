"""Does a daemon left running hold steady while processes come and go?
`gpuwatch serve --process-metrics --db FILE` at a fast interval on fake GPUs
whose processes each live LIFE seconds and are replaced as they end (a fleet of
short jobs, on a timeline that repeats every PERIOD seconds, so the churn never
stops), its /metrics, /api/v1/processes, /api/v1/events and /api/v1/leaks read
every 2 s; beside it, as the reference in the same run, the C loop making the
same NVML calls on the same scenario (the fake library's own memory under the
churn). Prints both RSS and the events the daemon holds (a ring of the newest
5000, which fills over the first tens of minutes) every minute, then the
daemon's growth over the second half of the run and any read that failed.

    python3 bench/soak.py BUILD_DIR [SECONDS] [--interval 200ms] [--gpus 4]
                          [--concurrent 16] [--life 40] [--period 1200]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from httpload import free_port
from proc_status import status_kib


def write_scenario(path, gpus, concurrent, life, period):
    with open(path, "w") as f:
        f.write(f"clock: wall\nperiod: {period}s\ndevices:\n")
        pid = 200000
        per_gpu = concurrent * period // life
        for _ in range(gpus):
            f.write("  - name: NVIDIA H200\n    utilization_gpu: {constant: 70, noise: 5}\n"
                    "    processes:\n")
            for k in range(per_gpu):
                start = k * life / concurrent
                f.write(f"      - {{pid: {pid}, start: {start:.1f}, end: {start + life:.1f}, "
                        "memory: {ramp: {from: 1GiB, per_min: 600MiB}}, "
                        "sm_util: {constant: 5, noise: 3}}\n")
                pid += 1
    return gpus * per_gpu


def summary(marks, seconds):
    """The second half's RSS: its range, and its floor (lowest reading) in each
    third. The answers being built come and go by several MiB, so the floor,
    not a line through the readings, says whether memory is held."""
    half = [m for m in marks if m[0] >= seconds / 2]
    if len(half) < 3:
        return "second half: too few readings (run longer)"
    k = len(half) // 3
    thirds = [half[:k], half[k:2 * k], half[2 * k:]]
    floors = ", ".join(f"{min(m[1] for m in t):.1f}" for t in thirds)
    return (f"second half: serve RSS {min(m[1] for m in half):.1f} to "
            f"{max(m[1] for m in half):.1f} MiB, its floor in each third {floors} MiB; "
            f"C loop {min(m[2] for m in half):.1f} to {max(m[2] for m in half):.1f} MiB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("seconds", nargs="?", type=int, default=1800)
    ap.add_argument("--interval", default="200ms")
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--concurrent", type=int, default=16)
    ap.add_argument("--life", type=int, default=40)
    ap.add_argument("--period", type=int, default=1200)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gpuwatch-soak-")
    scenario = os.path.join(work, "churn.yaml")
    distinct = write_scenario(scenario, a.gpus, a.concurrent, a.life, a.period)
    port = free_port()
    env = dict(os.environ, GPUWATCH_FAKE_SCENARIO=scenario,
               GPUWATCH_NVML_LIBRARY=os.path.join(a.build, "lib", "libnvidia-ml-fake.so"),
               GPUWATCH_RUNTIME_DIR=os.path.join(work, "run"))
    env.pop("GPUWATCH_FAKE_TIME", None)
    os.makedirs(env["GPUWATCH_RUNTIME_DIR"], mode=0o700)
    interval_ms = int(a.interval[:-2]) if a.interval.endswith("ms") else int(float(a.interval[:-1]) * 1000)
    daemon = subprocess.Popen(
        [os.path.join(a.build, "gpuwatch"), "--scenario", scenario, "serve", "-i", a.interval,
         "--listen", f"127.0.0.1:{port}", "--process-metrics", "--db", os.path.join(work, "h.db")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c_loop = subprocess.Popen(
        [os.path.join(a.build, "bench", "nvml_c_loop"), str((a.seconds + 5) * 1000 // interval_ms),
         "ok", str(interval_ms)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"{a.gpus} GPUs, {a.concurrent} processes each at a time, each living {a.life} s "
          f"({distinct} in a {a.period} s timeline that repeats), serve -i {a.interval}")
    print(f"{'time':>6} {'serve RSS':>10} {'C loop RSS':>11} {'events held':>12}")
    started = time.time()
    last_print = -60.0
    marks = []
    failed = {}
    try:
        while time.time() - started < a.seconds:
            time.sleep(2)
            if daemon.poll() is not None:
                sys.exit(f"soak: the daemon exited ({daemon.returncode})")
            bodies = {}
            for path in ("/metrics", "/api/v1/processes", "/api/v1/snapshot",
                         "/api/v1/events?limit=5000"):
                try:
                    bodies[path] = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}",
                                                          timeout=10).read()
                except OSError as e:
                    failed[path] = failed.get(path, 0) + 1
                    if failed[path] == 1:
                        print(f"soak: {path}: {e}", file=sys.stderr)
            now = time.time() - started
            if now - last_print >= 60:
                last_print = now
                body = bodies.get("/api/v1/events?limit=5000")
                held = len(json.loads(body)["events"]) if body else -1
                marks.append((now, status_kib(daemon.pid, "VmRSS") / 1024,
                              status_kib(c_loop.pid, "VmRSS") / 1024))
                print(f"{now:5.0f}s {marks[-1][1]:7.1f} MiB {marks[-1][2]:8.1f} MiB {held:12d}",
                      flush=True)
    finally:
        daemon.terminate()
        c_loop.terminate()
        daemon.wait()
        c_loop.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(summary(marks, a.seconds))
    print(f"reads that failed: {failed if failed else 'none'}")


if __name__ == "__main__":
    main()
