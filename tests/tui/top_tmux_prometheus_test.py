#!/usr/bin/env python3
"""`gpuwatch top --prometheus URL` as a user meets it: the real binary in tmux, reading a
real Prometheus (Debian's `prometheus`) that scrapes two real `gpuwatch serve` daemons.

    top_tmux_prometheus_test.py GPUWATCH_BINARY SOURCE_DIR CASE PROMETHEUS_BINARY

CASE is a function below named case_*, one ctest each (tests/tui/CMakeLists.txt). The
helpers are tmux_harness.py's (it reads the first three arguments). Daemons listen on ports
the kernel picks, Prometheus on a free_port() (never tests/integration's and
prometheus_fleet_test's 19090-19092). Every wait has a deadline; every process started dies
with the test; the temp dirs (with the tmux sockets) go at its end.
"""
import ctypes
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tmux_harness as tt  # noqa: E402  (reads BIN, SRC, CASE from sys.argv)
from tmux_harness import DEADLINE, Fail, Tmux, check, rows  # noqa: E402

PROMETHEUS = sys.argv[4]
TEMP_DIRS = []
HOST_C = os.path.join(tt.SRC, "tests/integration/scenarios/host-c.yaml")  # 4 idle GPUs


def temp_dir():
    d = tempfile.mkdtemp(prefix="gwtop-prom-")
    TEMP_DIRS.append(d)
    return d


def die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def spawn(cmd, log):
    """A child in its own process group, its output in `log`, killed if the test dies."""
    with open(log, "wb") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=die_with_parent, env=tt.env())
    tt.CHILDREN.append(p)
    return p


def tail(path, n=2000):
    with open(path, errors="replace") as f:
        return f.read()[-n:]


def answers(url):
    try:
        urllib.request.urlopen(url, timeout=2).read()
        return True
    except Exception:
        return False


def serve(tmp, hostname, *source):
    """`gpuwatch serve --hostname NAME` on 127.0.0.1:0; returns (process, port) once ready."""
    log = os.path.join(tmp, hostname + ".log")
    p = spawn([tt.BIN, "serve", "--listen", "127.0.0.1:0", "--hostname", hostname, *source], log)
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and p.poll() is None:
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", tail(log, 100000))
        if m and answers("http://127.0.0.1:%s/readyz" % m.group(1)):
            return p, int(m.group(1))
        time.sleep(0.2)
    raise Fail("gpuwatch serve --hostname %s never became ready:\n%s" % (hostname, tail(log)))


def prometheus(tmp, targets):
    """A Prometheus scraping `targets` every second; returns its base URL once /-/ready."""
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: gpuwatch\n    static_configs:\n"
                "      - targets: [%s]\n" % ", ".join('"%s"' % t for t in targets))
    log = os.path.join(tmp, "prometheus.log")
    for attempt in range(3):  # a free_port() another process took first: Prometheus exits
        port = tt.free_port()
        p = spawn([PROMETHEUS, "--config.file=" + config,
                   "--storage.tsdb.path=" + os.path.join(tmp, "data-%d" % attempt),
                   "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"], log)
        url = "http://127.0.0.1:%d" % port
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and p.poll() is None:
            if answers(url + "/-/ready"):
                return url
            time.sleep(0.2)
        if p.poll() is None:
            break
    raise Fail("Prometheus never became ready:\n" + tail(log))


def header(s):
    return s.splitlines()[0] if s else ""


def clock(s):
    m = re.search(r"(\d\d:\d\d:\d\d)\s*$", header(s))
    return m.group(1) if m else None


def go(t, key, arrived):
    """Presses `key` (Tab, BTab) until the header satisfies `arrived`; returns the screen."""
    for _ in range(4):
        s = t.screen()
        if arrived(header(s)):
            return s
        before = header(s).split("PROMETHEUS")[0]
        t.keys(key)
        t.wait(lambda s: header(s).split("PROMETHEUS")[0] != before)
    raise Fail("%s never reached the tab wanted:\n%s" % (key, t.screen()))


def to_tab(t, name):  # a tab's place is the order its host first came in
    return go(t, "Tab", lambda h: h.startswith("gpuwatch top  %s " % name))


def to_fleet(t):
    return go(t, "BTab", lambda h: "hosts up" in h)


# --- the cases ---------------------------------------------------------------------------

def case_fleet():
    """Two daemons (fleet-a: the demo's 8 GPUs with processes; fleet-b: host-c's 4 idle GPUs)
    seen only through Prometheus: the PROMETHEUS banner, both hosts and their GPU rows in the
    fleet overview, each host's own tab (Tab there, Shift-Tab back), signals refused. Then
    fleet-b is killed: Prometheus's `up` turns 0, fleet-b shows down with the target and its
    last values (never the freest), while fleet-a keeps updating; q exits 0."""
    tmp = temp_dir()
    _, a = serve(tmp, "fleet-a", "--demo", "--process-metrics")
    killed, b = serve(tmp, "fleet-b", "--scenario", HOST_C)
    url = prometheus(tmp, ["127.0.0.1:%d" % a, "127.0.0.1:%d" % b])
    t = Tmux(["--prometheus", url], 120, 30)
    try:
        s = t.wait(lambda s: "2 of 2 hosts up, 12 GPUs" in header(s) and
                   len(rows(s, r"^fleet-a\s+\d ")) == 8 and len(rows(s, r"^fleet-b\s+\d ")) == 4,
                   timeout=DEADLINE + 30)
        check("PROMETHEUS " + url in header(s), "the header names PROMETHEUS and the URL", s)
        check(re.search(r"^ Fleet\s+fleet-[ab]\s+fleet-[ab]\s*$", s, re.M),
              "a tab for the fleet and each host", s)
        check(all(re.search(r"\sok\s*$|freest\s*$", l) for l in rows(s, r"^fleet-[ab]\s+\d ")),
              "every GPU ok", s)
        freest = rows(s, r"freest\s*$")
        check(len(freest) == 1 and re.match(r"fleet-b\s+0 H200", freest[0]),
              "the freest GPU: fleet-b's idle H200 0", s)
        check(re.search(r"^fleet-a\s+\d .*\s[1-9]\d*\s+(ok|← freest)\s*$", s, re.M),
              "fleet-a's processes counted (--process-metrics)", s)
        # fleet-a's own tab: its 8 GPU blocks and its processes; signals stay home.
        to_tab(t, "fleet-a")
        s = t.wait(lambda s: re.search(r"^\s+7 L40S", s, re.M) and "41001" in s)
        check("PROMETHEUS " + url in header(s) and clock(s), "the banner and clock on a tab", s)
        t.keys("g", "T")
        t.wait(r"signals go only to this machine's processes")
        t.keys("Escape")
        to_fleet(t)
        to_tab(t, "fleet-b")
        s = t.wait(lambda s: re.search(r"^\s+3 L40S", s, re.M) and not re.search(r"^\s+4 ", s, re.M))
        check("no GPU processes" in s, "fleet-b has no processes", s)
        to_fleet(t)

        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        down = r"down: Prometheus: target 127\.0\.0\.1:%d" % b
        s = t.wait(lambda s: "1 of 2 hosts up, 12 GPUs" in header(s) and
                   re.search(r"^ Fleet .*fleet-b \(down\)", s, re.M) and
                   len([l for l in rows(s, r"^fleet-b\s+\d ") if re.search(down, l)]) == 4,
                   timeout=DEADLINE + 30)
        check(len(rows(s, r"^fleet-a\s+\d .*\s(ok|← freest)\s*$")) == 8, "fleet-a still ok", s)
        freest = rows(s, r"freest\s*$")
        check(len(freest) == 1 and freest[0].startswith("fleet-a"), "a down host is never freest", s)
        # fleet-b's tab: the reason, and the 4 GPUs it last had, stale.
        s = to_tab(t, "fleet-b")
        s = t.wait(down + r" down \(showing its last answer; retrying\)")
        check(len(rows(s, r"^\s+[0-3] (H200|L40S) .*STALE")) == 4, "its 4 GPUs, STALE", s)
        # fleet-a's tab: still updating (its clock moves), its processes still there.
        s = to_tab(t, "fleet-a")
        s = t.wait(lambda s: clock(s) and "41001" in s)
        before = clock(s)
        t.wait(lambda s: clock(s) and clock(s) != before and "STALE" not in s)
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()


def case_bad_url():
    """Prometheus unreachable (a closed port) and a server that is not Prometheus (a
    `gpuwatch serve` daemon) each show the reason while top keeps running; q exits 0. A
    malformed URL exits 2 naming the problem."""
    tmp = temp_dir()
    closed = tt.free_port()
    t = Tmux(["--prometheus", "http://127.0.0.1:%d" % closed], 120, 30)
    try:
        s = t.wait(r"^ down: Prometheus at http://127\.0\.0\.1:%d unreachable: connection refused"
                   % closed)
        check("PROMETHEUS http://127.0.0.1:%d" % closed in header(s), "the banner", s)
        t.keys("?")
        t.wait(r"gpuwatch top: keys")
        t.keys("Escape")
        t.wait(r"^ down: Prometheus at .* unreachable: connection refused")
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()
    _, daemon = serve(tmp, "not-prometheus", "--demo")
    t = Tmux(["--prometheus", "http://127.0.0.1:%d" % daemon], 120, 30)
    try:
        t.wait(r"^ down: POST http://127\.0\.0\.1:%d/api/v1/query: HTTP 405: "
               r"not a Prometheus API answer" % daemon)
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()
    for url, why in [("", "empty"), ("ftp://x", "the scheme must be http or https"),
                     ("http://127.0.0.1:9090/api/v1/query", "not an API path")]:
        t = Tmux(["--prometheus", url], 200, 30)
        try:
            s = t.wait(r"EXIT=\d")
            check(re.search(r'^gpuwatch top: --prometheus: Prometheus URL "%s": .*%s' %
                            (re.escape(url), why), s, re.M) and "EXIT=2" in s,
                  "%s: exit 2 naming the problem" % url, s)
        finally:
            t.close()


def main():
    fn = globals().get("case_" + tt.CASE)
    if fn is None:
        print("unknown case %r" % tt.CASE)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("killed by SIGTERM"))
    os.environ["TMUX_TMPDIR"] = temp_dir()  # the tmux sockets go with the temp dirs
    try:
        fn()
    except Fail as e:
        print("FAIL %s: %s" % (tt.CASE, e))
        for log in sorted(l for d in TEMP_DIRS for l in glob.glob(os.path.join(d, "*.log"))):
            print("--- %s:\n%s" % (os.path.basename(log), tail(log)))
        return 1
    finally:
        tt.kill_children()
        for d in TEMP_DIRS:
            shutil.rmtree(d, ignore_errors=True)
    print("ok %s" % tt.CASE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
