"""/metrics latency and throughput of `gpuwatch serve` on 8 GPUs x 64 processes
(fake NVML, --process-metrics: the largest body), next to the reference of the
same run: Prometheus' own /metrics page (Go client_golang), served on this
machine by the Debian `prometheus` server, through the same client code.

    python3 bench/metrics_bench.py BUILD_DIR [SECONDS] [CONNECTIONS]

Each connection is a keep-alive HTTP/1.1 client in its own thread asking
again as soon as it has the body; latency is per request (client side),
throughput the total of all connections. Prints p50 / p99 / mean latency,
requests per second, body size and series count for both, and the ratios."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from httpload import free_port, load, wait_http

build = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 4
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario(path):
    with open(path, "w") as f:
        f.write("clock: wall\nperiod: 1h\ndevices:\n")
        for g in range(8):
            f.write(f"  - name: NVIDIA H200\n    utilization_gpu: {{constant: 80, noise: 5}}\n"
                    f"    temperature_gpu: {{constant: 60, noise: 2}}\n    power_draw: {{constant: 500, noise: 20}}\n"
                    f"    processes:\n")
            for p in range(64):
                f.write(f"      - {{pid: {100000 + g * 100 + p}, memory: {{constant: {1 + p % 2}GiB, noise: 10MiB}}, "
                        f"sm_util: {{constant: 1, noise: 1}}}}\n")


tmp = tempfile.mkdtemp()
procs = []
try:
    scen = os.path.join(tmp, "fleet.yaml")
    scenario(scen)
    gw_port, prom_port = free_port(), free_port()
    env = dict(os.environ)
    env.pop("GPUWATCH_FAKE_TIME", None)
    procs.append(subprocess.Popen(
        [os.path.join(build, "gpuwatch"), "--scenario", scen, "serve", "--listen", f"127.0.0.1:{gw_port}",
         "--process-metrics", "--process-user"], env=env, stderr=subprocess.DEVNULL))
    with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
        f.write("global: {scrape_interval: 1h}\n")
    procs.append(subprocess.Popen(
        [shutil.which("prometheus") or "/usr/bin/prometheus", f"--config.file={tmp}/prometheus.yml",
         f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    bodies = {"gpuwatch serve /metrics (8 GPUs x 64 processes)": (gw_port, wait_http(gw_port, "/metrics")),
              "prometheus' own /metrics (client_golang)": (prom_port, wait_http(prom_port, "/metrics"))}
    time.sleep(2)  # a few samples in
    results = {}
    for name, (port, body) in bodies.items():
        load(port, "/metrics", 2, connections)  # warm-up
        r = load(port, "/metrics", seconds, connections)
        series = sum(1 for line in wait_http(port, "/metrics").decode().splitlines() if line and not line.startswith("#"))
        r["series"] = series
        r["bytes"] = len(wait_http(port, "/metrics"))
        results[name] = r
        print(f"{name}: p50={r['p50_ms']:.2f} ms p99={r['p99_ms']:.2f} ms mean={r['mean_ms']:.2f} ms "
              f"rps={r['rps']:.0f} ({r['requests']} requests, {connections} connections, {seconds:.0f} s) "
              f"series={series} bytes={r['bytes']}")
    (a, b) = results.values()
    print(f"ratio gpuwatch/prometheus: p50={a['p50_ms'] / b['p50_ms']:.2f} p99={a['p99_ms'] / b['p99_ms']:.2f} "
          f"rps={a['rps'] / b['rps']:.2f}; per series: p50 {1e3 * a['p50_ms'] / a['series']:.2f} vs "
          f"{1e3 * b['p50_ms'] / b['series']:.2f} us")
finally:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=10)
    shutil.rmtree(tmp, ignore_errors=True)
