"""HTTP load helpers shared by the /metrics benchmarks."""
import http.client
import socket
import statistics
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
