#!/usr/bin/env python3
"""Hostile clients against a real `gpuwatch serve` on loopback (issue 13).

Each attack runs against the demo daemon while a prober asks /healthz and
/metrics every 100 ms. Asserted: the answers each attack must get, that
/healthz answers 200 throughout, and that the daemon's memory stays bounded.
Printed: a Markdown table (RSS before/after, probe latency under attack) for
docs/RELIABILITY.md.

usage: attack_suite.py GPUWATCH_BINARY
"""
import base64
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

GPUWATCH = os.path.abspath(sys.argv[1])
RSS_GROWTH_LIMIT_MIB = 128   # per attack, after it ends
RSS_LIMIT_MIB = 512          # at any point measured
failures = []
rows = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Daemon:
    def __init__(self, args, env=None, wait_for_port=True):
        self.dir = tempfile.mkdtemp(prefix="gw-attack-")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        e = dict(os.environ, GPUWATCH_RUNTIME_DIR=self.dir)
        e.pop("GPUWATCH_FAKE_TIME", None)
        e.update(env or {})
        self.proc = subprocess.Popen([GPUWATCH, "serve", "--listen", "127.0.0.1:0"] + args,
                                     stdout=self.log, stderr=subprocess.STDOUT, env=e)
        self.port = None
        if wait_for_port:
            for _ in range(200):
                m = re.search(r"listening on https?://127\.0\.0\.1:(\d+)/", self.text())
                if m:
                    self.port = int(m.group(1))
                    break
                time.sleep(0.05)
            assert self.port, self.text()
            for _ in range(200):  # the first snapshot
                if http(self.port, "/readyz")[0] == 200:
                    break
                time.sleep(0.05)

    def text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def http(port, path, headers=None, timeout=10):
    """One GET on a fresh connection, read until the server closes it (the
    request says Connection: close; the server keeps a connection open
    otherwise): (status, body, seconds)."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    h = {"Host": "127.0.0.1", "Connection": "close"}
    h.update(headers or {})
    req = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
    s.sendall(req.encode())
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    elapsed = time.monotonic() - t0
    m = re.match(rb"HTTP/1\.1 (\d{3})", data)
    head, _, body = data.partition(b"\r\n\r\n")
    return (int(m.group(1)) if m else -1), body, elapsed


class Prober:
    """Asks /healthz and /metrics every 100 ms while an attack runs."""

    def __init__(self, port):
        self.port, self.stop_flag = port, threading.Event()
        self.health, self.metrics, self.bad = [], [], []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_flag.is_set():
            status, _, t = http(self.port, "/healthz")
            self.health.append(t)
            if status != 200:
                self.bad.append(status)
            status, _, t = http(self.port, "/metrics")
            self.metrics.append(t)
            time.sleep(0.1)

    def finish(self):
        self.stop_flag.set()
        self.thread.join()


def ms(values, q):
    if not values:
        return "-"
    values = sorted(values)
    return f"{1000 * values[min(len(values) - 1, int(q * len(values)))]:.1f}"


def attack(d, name, fn):
    before = rss_mib(d.proc.pid)
    prober = Prober(d.port)
    peak = [before]
    watching = threading.Event()

    def watch_rss():
        while not watching.is_set():
            peak[0] = max(peak[0], rss_mib(d.proc.pid))
            time.sleep(0.05)

    w = threading.Thread(target=watch_rss, daemon=True)
    w.start()
    t0 = time.monotonic()
    result = fn()
    took = time.monotonic() - t0
    time.sleep(1)
    prober.finish()
    watching.set()
    w.join()
    after = rss_mib(d.proc.pid)
    check(not prober.bad, f"{name}: /healthz answered {prober.bad}")
    check(peak[0] < RSS_LIMIT_MIB, f"{name}: RSS peaked at {peak[0]:.0f} MiB")
    check(after - before < RSS_GROWTH_LIMIT_MIB,
          f"{name}: RSS grew {before:.0f} -> {after:.0f} MiB")
    rows.append((name, result, f"{before:.0f}", f"{peak[0]:.0f}", f"{after:.0f}",
                 ms(prober.health, 0.5), ms(prober.health, 1.0),
                 ms(prober.metrics, 0.5), ms(prober.metrics, 1.0), f"{took:.1f}"))
    print(f"{name}: {result}", flush=True)


def clients(n, fn):
    out = [None] * n
    threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, fn(i))) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def stream_until_cut(port, head, chunk, limit):
    """Sends `head`, then `chunk` until the server hangs up or `limit` bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    sent = 0
    answer = b""
    try:
        s.sendall(head)
        s.setblocking(False)
        while sent < limit:
            try:
                sent += s.send(chunk)
            except BlockingIOError:
                time.sleep(0.001)
            try:
                got = s.recv(65536)
                if not got:
                    break
                answer += got
            except BlockingIOError:
                pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
    m = re.match(rb"HTTP/1\.1 (\d{3})", answer)
    return sent, int(m.group(1)) if m else None


def main():
    tmp = tempfile.mkdtemp(prefix="gw-attack-sock-")
    sock = os.path.join(tmp, "job.sock")
    # An alert that fires at the first sample: what a mark flood must not push out.
    rules = os.path.join(tmp, "rules.yaml")
    with open(rules, "w") as f:
        f.write("rules:\n  - name: any_gpu\n    condition: memory_used_ratio >= 0%\n"
                "    severity: info\n")
    d = Daemon(["--demo", "--socket", sock, "--rules", rules])
    d.socket = sock
    try:
        run_http_attacks(d)
    finally:
        d.stop()
    run_auth_attacks()
    run_hang()
    print()
    print("| attack | outcome | RSS before MiB | peak | after | /healthz p50 ms | max | "
          "/metrics p50 ms | max | seconds |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    if failures:
        print("\nattack suite: FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nattack suite: every attack answered as it should, memory bounded, /healthz up")


def run_http_attacks(d):
    port = d.port
    plain = len(http(port, "/metrics")[1])

    def ranges():
        header = "bytes=0-" + ",0-" * 1000

        def one(_):
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {header}\r\n"
                      "Connection: close\r\n\r\n".encode())
            time.sleep(3)  # not reading
            data = b""
            while True:
                c = s.recv(1 << 16)
                if not c:
                    break
                data += c
            s.close()
            return data

        got = clients(16, one)
        ok = all(g.startswith(b"HTTP/1.1 200") and len(g) < 2 * plain + 4096 for g in got)
        check(ok, "ranges: 16 x 1000 ranges not answered 200 with one body each")
        return f"16 clients x 1000 ranges: 200, {max(len(g) for g in got) // 1024} KiB each"
    attack(d, "1 Range amplification", ranges)

    def bodies():
        head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunk = b"1000\r\n" + b"a" * 0x1000 + b"\r\n"
        got = clients(8, lambda _: stream_until_cut(port, head, chunk * 16, 256 << 20))
        check(all(s == 413 for _, s in got), f"bodies: answers {[s for _, s in got]}")
        check(all(n < 64 << 20 for n, _ in got), "bodies: a client sent 64 MiB")
        return f"8 endless chunked bodies: 413, cut after <= {max(n for n, _ in got) >> 10} KiB"
    attack(d, "2 Request bodies", bodies)

    def headers():
        head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
        got = clients(8, lambda _: stream_until_cut(port, head, line * 64, 256 << 20))
        check(all(n < 64 << 20 for n, _ in got), "headers: a client sent 64 MiB of headers")
        return (f"8 endless header blocks: cut after <= {max(n for n, _ in got) >> 10} KiB, "
                f"answers {sorted(set(str(s) for _, s in got))}")
    attack(d, "3 Header flood", headers)

    def pipelined():
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        one = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        t0 = time.monotonic()
        s.sendall(one * 3)
        data = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
        took = time.monotonic() - t0
        s.close()
        check(data.startswith(b"HTTP/1.1 200") and b"Connection: close" in data,
              "pipelining: first not answered with Connection: close")
        return f"3 in one write: first answered, closed after {1000 * took:.0f} ms"
    attack(d, "4 Pipelined requests", pipelined)

    def host():
        got = {p: http(port, p, {"Host": "evil.example.com"})[0]
               for p in ["/api/v1/processes", "/metrics", "/healthz"]}
        check(set(got.values()) == {421}, f"host: {got}")
        return "Host evil.example.com: 421 on /api/v1/processes, /metrics, /healthz"
    attack(d, "5 Foreign Host", host)

    def leases():
        # World-writable by design: a 26 MB file in the runtime directory.
        path = os.path.join(d.dir, "leases.json")
        entry = {"gpu_uuid": "GPU-x" * 10, "pid": 1, "start_ticks": 1, "owner": "x" * 100}
        with open(path, "w") as f:
            json.dump({"version": 1, "leases": [entry] * 120000, "queue": []}, f)
        size = os.path.getsize(path) >> 20
        got = [http(port, "/metrics") for _ in range(20)]
        check(all(s == 200 for s, _, _ in got), "leases: /metrics not 200")
        os.remove(path)
        return f"{size} MB lease file: 20 scrapes answered, slowest {max(t for *_, t in got) * 1000:.0f} ms"
    attack(d, "8 Huge lease file", leases)

    def job_socket():
        sock_path = d.socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        t0 = time.monotonic()
        for i in range(20000):
            s.sendall(f"mark step={i}\n".encode())
        flood_s = time.monotonic() - t0
        s.close()
        held = []
        for _ in range(3000):
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.setblocking(False)
                c.connect_ex(sock_path)
                held.append(c)
            except OSError:
                break
        time.sleep(2)
        events = json.loads(http(port, "/api/v1/events?since=0&limit=5000")[1])["events"]
        alerts = [e for e in events if e.get("kind") == "alert_firing"]
        check(alerts, "job socket: the alerts were pushed out of the events by marks")
        for c in held:
            c.close()
        return (f"20000 marks in {flood_s:.1f} s, {len(held)} held connections: "
                f"{len(alerts)} alerts kept, {sum(1 for e in events if e.get('kind') == 'mark')} "
                "marks kept")
    attack(d, "9 Job socket flood", job_socket)


def bcrypt_hash(password):
    import crypt  # Debian's python3 still ships it (3.11); deprecated, fine for a test
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))


def run_auth_attacks():
    tmp = tempfile.mkdtemp(prefix="gw-attack-web-")
    web = os.path.join(tmp, "web.yml")
    with open(web, "w") as f:
        f.write(f"basic_auth_users:\n  alice: '{bcrypt_hash('s3cret')}'\n")
    d = Daemon(["--demo", "--web-config", web])
    try:
        def auth(user, password):
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            return http(d.port, "/metrics", {"Authorization": "Basic " + token})

        def enumeration():
            unknown = [auth("mallory", "x")[2] for _ in range(20)]
            known = [auth("alice", "wrong")[2] for _ in range(20)]
            check(auth("mallory", "x")[0] == 401 and auth("alice", "wrong")[0] == 401,
                  "auth: refusals are not 401")
            return (f"refusal median: unknown user {1000 * statistics.median(unknown):.1f} ms, "
                    f"known user {1000 * statistics.median(known):.1f} ms")
        attack(d, "6a User enumeration by timing", enumeration)

        def flood():
            stop = threading.Event()

            def wrong(_):
                n = 0
                while not stop.is_set():
                    auth("alice", "guess")
                    n += 1
                return n
            threads = [threading.Thread(target=wrong, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            time.sleep(1)
            good = [auth("alice", "s3cret") for _ in range(20)]
            stop.set()
            for t in threads:
                t.join()
            check(all(s == 200 for s, _, _ in good), "auth flood: an authorised scrape failed")
            return (f"8 wrong-password clients: authorised scrapes p50 "
                    f"{1000 * statistics.median(t for *_, t in good):.1f} ms")
        attack(d, "6b Wrong-password flood (probes without credentials)", flood)
    finally:
        d.stop()


def run_hang():
    tmp = tempfile.mkdtemp(prefix="gw-attack-hang-")
    scenario = os.path.join(tmp, "hang.yaml")
    with open(scenario, "w") as f:
        f.write("devices:\n  - {name: NVIDIA H200}\nfaults:\n  - hang: {call: nvmlDeviceGetCount_v2}\n")
    lib = os.path.join(os.path.dirname(GPUWATCH), "lib", "libnvidia-ml-fake.so")
    d = Daemon([], {"GPUWATCH_NVML_LIBRARY": lib, "GPUWATCH_FAKE_SCENARIO": scenario},
               wait_for_port=False)
    time.sleep(2)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    try:
        code = d.proc.wait(15)
    except subprocess.TimeoutExpired:
        code = None
        d.proc.kill()
    took = time.monotonic() - t0
    check(code is not None, "hang: SIGTERM did not end serve while discovery hangs")
    rows.append(("11 Hang in discovery", f"SIGTERM: exit {code} after {1000 * took:.0f} ms",
                 "-", "-", "-", "-", "-", "-", "-", f"{took:.1f}"))


if __name__ == "__main__":
    main()
