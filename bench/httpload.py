"""HTTP load helpers shared by the /metrics benchmarks."""
import http.client
import socket
import statistics
import subprocess
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_http(port, path, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            if r.status == 200 and body:
                return body
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"no answer on :{port}{path}")


def load(port, path, seconds, connections):
    latencies = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = []
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            c.request("GET", path, headers={"Accept": "text/plain"})
            r = c.getresponse()
            r.read()
            mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    latencies.sort()
    return {
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "mean_ms": 1000 * statistics.fmean(latencies),
        "rps": len(latencies) / wall,
        "requests": len(latencies),
    }


def to_ms(text):
    for unit, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise ValueError(text)


def wrk(port, seconds, connections, headers):
    args = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "--timeout", "5s"]
    for h in headers:
        args += ["-H", h]
    out = subprocess.run(args + [f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True,
                         check=True).stdout
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("50%", "99%"):
            r["p" + f[0][:-1] + "_ms"] = to_ms(f[1])
        elif line.startswith("Requests/sec:"):
            r["rps"] = float(f[1])
        elif "requests in" in line:
            r["requests"] = int(f[0])
        elif "Non-2xx" in line or "Socket errors" in line:
            r.setdefault("errors", []).append(line.strip())
    return r
