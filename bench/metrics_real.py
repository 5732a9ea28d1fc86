"""/metrics on the real GPUs: the latency and rate of `gpuwatch serve`'s
scrapes next to what the common alternatives do per scrape, measured in the
same run on the same machine:

  * `nvidia-smi --query-gpu=... --format=csv` (exporters that shell out to
    nvidia-smi on every scrape, e.g. nvidia_gpu_exporter);
  * pynvml reading the same fields in-process (Python exporters), when
    pynvml is installed.

    python3 bench/metrics_real.py GPUWATCH_BINARY [SECONDS]

gpuwatch is measured with 1 and 4 keep-alive connections; the references
run back to back on one thread (a scrape each). Prints p50 / p99 per request
and requests per second, and the ratios."""
import os
import subprocess
import sys
import time

from httpload import free_port, load, wait_http

binary = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 15
QUERY = ("index,uuid,name,pci.bus_id,memory.used,memory.total,utilization.gpu,utilization.memory,"
         "temperature.gpu,power.draw,clocks.sm,clocks.mem,pstate")


def timed(fn, seconds):
    latencies = []
    end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    while time.perf_counter() < end:
        s = time.perf_counter()
        fn()
        latencies.append(time.perf_counter() - s)
    wall = time.perf_counter() - t0
    latencies.sort()
    return {"p50_ms": 1000 * latencies[len(latencies) // 2],
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "rps": len(latencies) / wall, "requests": len(latencies)}


def nvidia_smi():
    subprocess.run(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                   check=True, stdout=subprocess.DEVNULL)


def pynvml_scrape():
    import pynvml
    if not getattr(pynvml_scrape, "init", False):
        pynvml.nvmlInit()
        pynvml_scrape.init = True
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        pynvml.nvmlDeviceGetUUID(h)
        pynvml.nvmlDeviceGetName(h)
        pynvml.nvmlDeviceGetPciInfo(h)
        pynvml.nvmlDeviceGetMemoryInfo(h)
        pynvml.nvmlDeviceGetUtilizationRates(h)
        pynvml.nvmlDeviceGetTemperature(h, 0)
        pynvml.nvmlDeviceGetPowerUsage(h)
        pynvml.nvmlDeviceGetClockInfo(h, 1)
        pynvml.nvmlDeviceGetClockInfo(h, 2)
        pynvml.nvmlDeviceGetPerformanceState(h)


def show(name, r):
    print(f"{name}: p50={r['p50_ms']:.2f} ms p99={r['p99_ms']:.2f} ms rps={r['rps']:.0f} "
          f"({r['requests']} requests, {seconds:.0f} s)", flush=True)


port = free_port()
server = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}"],
                          stderr=subprocess.DEVNULL)
try:
    body = wait_http(port, "/metrics")
    time.sleep(3)  # a few samples in
    series = sum(1 for line in wait_http(port, "/metrics").decode().splitlines()
                 if line and not line.startswith("#"))
    print(f"gpuwatch /metrics: {series} series, {len(body)} bytes", flush=True)
    load(port, "/metrics", 1, 1)  # warm-up
    one = load(port, "/metrics", seconds, 1)
    show("gpuwatch serve /metrics, 1 connection", one)
    four = load(port, "/metrics", seconds, 4)
    show("gpuwatch serve /metrics, 4 connections", four)
finally:
    server.terminate()
    server.wait(timeout=10)

smi = timed(nvidia_smi, seconds)
show(f"nvidia-smi --query-gpu ({QUERY.count(',') + 1} fields)", smi)
print(f"ratio gpuwatch/nvidia-smi (1 connection): p50={one['p50_ms'] / smi['p50_ms']:.4f} "
      f"rps={one['rps'] / smi['rps']:.1f}", flush=True)
try:
    import pynvml  # noqa: F401
    py = timed(pynvml_scrape, seconds)
    show("pynvml, the same fields in-process", py)
    print(f"ratio gpuwatch/pynvml (1 connection): p50={one['p50_ms'] / py['p50_ms']:.3f} "
          f"rps={one['rps'] / py['rps']:.2f}", flush=True)
except ImportError:
    print("pynvml: not installed here, no in-process reference", flush=True)
