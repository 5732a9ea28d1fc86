"""/metrics latency and throughput of `gpuwatch serve` on 8 GPUs x 64 processes
(fake NVML, --process-metrics: the largest body), next to the reference of the
same run: Prometheus' own /metrics page (Go client_golang), served on this
machine by the Debian `prometheus` server, loaded the same way.

    python3 bench/metrics_bench.py BUILD_DIR [SECONDS] [CONNECTIONS]

The load is wrk (Debian's `wrk`; apt-get install wrk): CONNECTIONS (default 8)
keep-alive HTTP/1.1 clients on 2 threads, each asking again as soon as it has
the body, for SECONDS (default 20), twice per endpoint: as Prometheus asks
(its Accept header and Accept-Encoding: gzip) and plain (no compression).
Latency is per request at the client (wrk's p50 / p99), throughput the total.
Prints both endpoints, the series count and body sizes, and the ratios."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import fleet_scenario
from proc_status import cpu_seconds
from httpload import free_port, wait_http, wrk

# What Prometheus 2.x sends when it scrapes.
PROMETHEUS_HEADERS = [
    "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding: gzip",
]


def body_size(port, headers):
    args = ["curl", "-s", "-o", "/dev/null", "-w", "%{size_download}"]
    for h in headers:
        args += ["-H", h]
    return int(subprocess.run(args + [f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True,
                              check=True).stdout)

build = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 8
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


tmp = tempfile.mkdtemp()
procs = []
try:
    scen = os.path.join(tmp, "fleet.yaml")
    fleet_scenario.write(scen)
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
    for port in (gw_port, prom_port):
        wait_http(port, "/metrics")
    time.sleep(3)  # a few samples in
    bodies = {"gpuwatch serve /metrics (8 GPUs x 64 processes)": (gw_port, wait_http(gw_port, "/metrics")),
              "prometheus' own /metrics (client_golang)": (prom_port, wait_http(prom_port, "/metrics"))}
    pids = dict(zip(bodies, (procs[0].pid, procs[1].pid)))
    results = {}
    for name, (port, body) in bodies.items():
        series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
        for how, headers in (("as Prometheus asks (gzip)", PROMETHEUS_HEADERS), ("plain", [])):
            wrk(port, 2, connections, headers)  # warm-up
            cpu0 = cpu_seconds(pids[name])
            r = wrk(port, seconds, connections, headers)
            # The server's CPU per scrape (for gpuwatch also its 1 s sampling, ~1 % of it).
            r["cpu_us"] = 1e6 * (cpu_seconds(pids[name]) - cpu0) / max(1, r["requests"])
            r["series"], r["bytes"] = series, body_size(port, headers)
            results[(name, how)] = r
            print(f"{name}, {how}: p50={r['p50_ms']:.3f} ms p99={r['p99_ms']:.3f} ms rps={r['rps']:.0f} "
                  f"({r['requests']} requests, {connections} connections, {seconds:.0f} s) "
                  f"series={series} body={r['bytes']} bytes, server CPU {r['cpu_us']:.0f} us a scrape "
                  f"{' '.join(r.get('errors', []))}")
    names = list(bodies)
    for how in ("as Prometheus asks (gzip)", "plain"):
        a, b = results[(names[0], how)], results[(names[1], how)]
        print(f"ratio gpuwatch/prometheus, {how}: p50={a['p50_ms'] / b['p50_ms']:.2f} "
              f"p99={a['p99_ms'] / b['p99_ms']:.2f} rps={a['rps'] / b['rps']:.2f} "
              f"CPU per scrape={a['cpu_us'] / b['cpu_us']:.2f}")
finally:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=10)
    shutil.rmtree(tmp, ignore_errors=True)
