#!/usr/bin/env python3
"""`gpuwatch top` as a user meets it: the real binary in a real terminal (tmux),
driven with send-keys and read back with capture-pane.

    top_tmux_test.py GPUWATCH_BINARY SOURCE_DIR CASE

CASE is one of the functions below named case_*; ctest runs each on its own
(tests/tui/CMakeLists.txt). Every wait polls the screen against a deadline, so
a loaded machine is slower, never wrong. Each case uses its own tmux server
(-L) and cleans up every process it started (the harness: tmux_harness.py).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_harness import (BIN, CASE, DEADLINE, SRC, Fail, Tmux, check, env,  # noqa: E402
                          free_port, kill_children, rows, run, server_name, shlex_quote, start)


def serve(port):
    p = start([BIN, "serve", "--demo", "--listen", "127.0.0.1:%d" % port], env=env())
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=2).read()
            return p
        except Exception:
            time.sleep(0.2)
    raise Fail("gpuwatch serve on port %d never became ready" % port)


# --- the cases ---------------------------------------------------------------------------

def case_layout():
    """The demo fleet at 80x24 (compact: 8 GPUs and the table fit), 200x60 (full blocks,
    charts, events) and back, and a terminal too small for anything."""
    t = Tmux(["--demo"], 80, 24)
    try:
        # The first frames may come before the processes are attributed (under load, a
        # capture can show GPU 7 with the table still empty): wait for the whole screen.
        s = t.wait(lambda s: re.search(r"^\s+7 L40S", s, re.M) is not None and
                   len(rows(s, r"^[ *]\s+4\d{4} ")) >= 5)
        gpus = rows(s, r"^\s+[0-7] \S.* MEM ")
        check(len(gpus) == 8, "8 GPU lines at 80x24", s)
        check("DEMO" in s.splitlines()[0], "the header says DEMO", s)
        # The lean binary, without HTTP and TLS (src/cli/top_cli.h).
        check(t.program() == "gpuwatch-top", "runs as gpuwatch-top (%s)" % t.program())
        check(re.search(r"PID .*USER .*GPU .*COMMAND", s), "the process table header", s)
        check(len(rows(s, r"^[ *]\s+4\d{4} ")) >= 5, "at least 5 process rows", s)
        check(all(len(l) <= 80 for l in s.splitlines()), "nothing wider than 80", s)
        t.resize(200, 60)
        # A capture can come in the middle of the redraw (under load, the GPU rows drawn
        # and the rest still blank): wait for the frame's last pane, the events at the
        # bottom, so that everything above it is of the same frame.
        def whole_wide_frame(s):
            return "MHz" in s and re.search(r"^\S+ events ", s, re.M) is not None

        s = t.wait(whole_wide_frame)
        check(re.search(r"GPU \d memory", s), "the chart pane at 200x60", s)
        check(re.search(r"^\s+5:0 ", s, re.M), "MIG devices under their GPU", s)
        t.resize(80, 24)
        s = t.wait(lambda s: "MHz" not in s and re.search(r"^\s+7 L40S", s, re.M))
        t.resize(30, 5)
        s = t.wait(r"too small")
        t.resize(100, 30)
        t.wait(r"^\s+0 H200")
        t.keys("q")
        s = t.wait(r"EXIT=0")
    finally:
        t.close()


def case_keys():
    """Help, sort (keys and a click), filter, tree, the process view, tags."""
    t = Tmux(["--demo"], 120, 40)
    try:
        t.wait(r"41001")
        t.keys("?")
        s = t.wait(r"gpuwatch top: keys")
        for k in ["Tab, Shift-Tab", "T, K, I", "click a column title", "/"]:
            check(k in s, "help lists %r" % k, s)
        t.keys("Escape")
        t.wait(r"GPU-MEM")
        # Default sort: GPU memory, largest first (alice's ranks, ~90 GiB each).
        s = t.screen()
        first = rows(s, r"^[ *]\s+4\d{4} ")[0]
        check(re.match(r"^[ *]\s+4100[12] ", first), "largest memory first", s)
        # '<' from GPU-MEM goes to GPU (ascending): erin's MIG jobs on GPU 5 are after GPU 4.
        t.keys("<")
        s = t.wait(r"GPU▲")
        pids = [l.split()[0] for l in rows(s, r"^[ *]\s+4\d{4} ")]
        check(pids[0] == "41001", "by GPU: GPU 0's process first (%s)" % pids, s)
        t.keys("r")
        s = t.wait(r"GPU▼")
        # Filter, narrowing as it is typed.
        t.keys("/")
        t.literal("eri")
        s = t.wait(lambda s: "filter: eri" in s and len(rows(s, r"^[ *]\s+4\d{4} ")) == 2)
        check(all("erin" in l for l in rows(s, r"^[ *]\s+4\d{4} ")), "only erin's", s)
        t.keys("Enter")
        t.wait(r'filter "eri"')
        t.keys("Escape")
        t.wait(lambda s: len(rows(s, r"^[ *]\s+4\d{4} ")) == 8)
        # Tag two processes with Space: marked '*'.
        t.keys("g", "Space", "Space")
        s = t.wait(lambda s: len(rows(s, r"^\*\s+4\d{4} ")) == 2)
        t.keys("u")
        t.wait(lambda s: len(rows(s, r"^\*\s+4\d{4} ")) == 0)
        # Tree: the demo's processes have no family here (their pids are not this machine's),
        # so each stands alone, and the view says nothing false.
        t.keys("t")
        t.wait(lambda s: len(rows(s, r"^[ *]\s+4\d{4} ")) == 8)
        t.keys("t")
        # The process view and back.
        t.keys("g", "Enter")
        s = t.wait(r"^ pid 4\d{4} ")
        check("framework" in s and "leak" in s, "the process view's facts", s)
        t.keys("e")
        t.wait(r"environment of pid")
        t.keys("Escape", "Escape")
        t.wait(r"GPU-MEM")
        # Chart window: w cycles 1 min -> 5 min (full mode at 120x40 has the chart pane).
        t.resize(200, 60)
        t.wait(r"last 1 min")
        t.keys("w")
        # A click on the PID title sorts by it: find the title on a whole frame.
        s = t.wait(lambda s: "last 5 min" in s and
                   re.search(r"\bPID\b.*COMMAND", s) is not None)
        header = [i for i, l in enumerate(s.splitlines()) if re.search(r"\bPID\b.*COMMAND", l)][0]
        col = s.splitlines()[header].index("PID") + 1
        click = "\x1b[<0;%d;%dM\x1b[<0;%d;%dm" % (col + 1, header + 1, col + 1, header + 1)
        t.literal(click)
        s = t.wait(r"PID▲")
        pids = [l.split()[0].lstrip("*") for l in rows(s, r"^[ *]\s+4\d{4} ")]
        check(pids == sorted(pids), "a click on PID sorts by pid (%s)" % pids, s)
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()


def scenario_with(pids, path):
    with open(path, "w") as f:
        f.write("devices:\n  - name: NVIDIA H200\n    memory_total: 143771MiB\n    processes:\n")
        for pid in pids:
            f.write("      - pid: %d\n        memory: {constant: 2GiB}\n" % pid)


def case_signals():
    """SIGTERM to a child the test started, confirmed; as root a second confirmation. When the
    test can run top as another user (root with setpriv), a process of root's is refused."""
    tmp = tempfile.mkdtemp()
    try:
        child = start(["sleep", "600"])
        scenario = os.path.join(tmp, "s.yaml")
        scenario_with([child.pid], scenario)
        t = Tmux(["--scenario", scenario], 120, 30)
        try:
            t.wait(r"^[ *]\s+%d " % child.pid)
            t.keys("T")
            # Our own child: asked once (root is asked twice only for other users' processes).
            t.wait(r"Send SIGTERM to 1 process \(pid %d\)\? y / n" % child.pid)
            t.keys("y")
            t.wait(r"sent SIGTERM to 1 process")
            child.wait(timeout=DEADLINE)
            check(child.returncode == -signal.SIGTERM, "the child died of SIGTERM (%s)" % child.returncode)
            t.keys("q")
        finally:
            t.close()
        if os.geteuid() == 0 and shutil.which("setpriv"):
            # Root signalling another user's process: warned, and asked a second time.
            theirs = start(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "sleep", "600"])
            scenario_with([theirs.pid], scenario)
            t = Tmux(["--scenario", scenario], 120, 30)
            try:
                t.wait(r"^[ *]\s+%d " % theirs.pid)
                t.keys("T")
                t.wait(r"You are root: this signals other users' processes")
                t.keys("y")
                t.wait(r"Send SIGTERM to 1 process \(pid %d\)\? y / n" % theirs.pid)
                check(theirs.poll() is None, "nothing sent after the first yes")
                t.keys("y")
                t.wait(r"sent SIGTERM to 1 process")
                theirs.wait(timeout=DEADLINE)
                t.keys("q")
            finally:
                t.close()
        # Refusal: someone else's process. As root, top runs as nobody against a root child.
        other = start(["sleep", "600"])
        scenario_with([other.pid], scenario)
        os.chmod(tmp, 0o755)
        os.chmod(scenario, 0o644)
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                raise Fail("root without setpriv cannot run top as another user")
            wrapper = os.path.join(tmp, "as-nobody.sh")
            with open(wrapper, "w") as f:
                f.write("#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups %s \"$@\"\n" % BIN)
            os.chmod(wrapper, 0o755)
            probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    BIN, "--version"], capture_output=True)
            if probe.returncode != 0:
                print("note: nobody cannot run %s (its directories are not readable by others); "
                      "the refusal is covered by tui_test's TopKeys.SignalsGoOnlyToYourOwnProcesses"
                      % BIN)
                return
            t = TmuxAs(wrapper, ["--scenario", scenario])
        else:
            pid1 = 1  # init: never ours when not root
            scenario_with([pid1], scenario)
            t = Tmux(["--scenario", scenario], 120, 30)
        try:
            t.wait(r"^[ *]\s+\d+ ")
            t.keys("K")
            s = t.wait(r"not yours")
            check("nothing sent" in s, "the refusal says nothing was sent", s)
            check(other.poll() is None, "the other user's process still runs")
            t.keys("q")
        finally:
            t.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class TmuxAs(Tmux):
    """top through a wrapper (another user)."""
    def __init__(self, wrapper, args, width=120, height=30):
        self.name = server_name("-as")
        self.tmux = ["tmux", "-L", self.name, "-f", "/dev/null"]
        command = " ".join(shlex_quote(a) for a in [wrapper, "top"] + args)
        run(self.tmux + ["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                         "sh", "-c", command + "; echo EXIT=$?; sleep 600"], env())


def case_readonly_and_mono():
    """--readonly has no signal keys; --theme mono and NO_COLOR draw without colours."""
    t = Tmux(["--demo", "--readonly"], 100, 30)
    try:
        t.wait(r"41001")
        t.keys("T")
        t.wait(r"--readonly: signals are off")
        check("T/K/I" not in t.screen(), "the key hints leave the signal keys out")
    finally:
        t.close()
    colour = re.compile(r"\x1b\[[0-9;]*(3[0-7]|4[0-7]|38;5;\d+|48;5;\d+)[;m]")
    for args, environ in [(["--demo", "--theme", "mono"], env()),
                          (["--demo"], env(NO_COLOR="1"))]:
        t = Tmux(args, 100, 30, environ)
        try:
            t.wait(r"41001")
            e = t.escapes()
            check(not colour.search(e), "no colour with %s %s" % (args, environ.get("NO_COLOR")),
                  e[:2000])
            check("\x1b[7m" in e or "\x1b[1m" in e, "mono still marks the header and severities")
        finally:
            t.close()
    t = Tmux(["--demo"], 100, 30)
    try:
        t.wait(r"41001")
        check(colour.search(t.escapes()), "the dark theme has colours")
    finally:
        t.close()


def case_hang():
    """A driver call that never returns: the GPU shows STALE and the keys keep working."""
    t = Tmux(["--scenario", os.path.join(SRC, "scenarios/test/hang.yaml"), "-i", "500ms"], 100, 30)
    try:
        t.wait(r"^\s+1 H200")
        t.wait(r"STALE", timeout=DEADLINE + 30)
        t.keys("?")
        t.wait(r"gpuwatch top: keys")
        t.keys("q")
        t.wait(r"STALE")
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()


def case_remote():
    """Two real daemons; one killed mid-way shows as down with the reason while the other
    keeps updating."""
    a, b = free_port(), free_port()
    serve(a)
    killed = serve(b)
    t = Tmux(["--remote", "127.0.0.1:%d,127.0.0.1:%d" % (a, b)], 120, 30)
    try:
        s = t.wait(r"2 of 2 hosts up, 16 GPUs")
        # Daemons are reached over HTTP: gpuwatch-top hands the command to gpuwatch-full.
        check(t.program() == "gpuwatch-full", "runs as gpuwatch-full (%s)" % t.program())
        check(re.search(r"Fleet", s) and "127.0.0.1:%d" % b in s, "tabs for the fleet and each host", s)
        check("freest" in s, "the fleet overview names the freest GPU", s)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        s = t.wait(r"127\.0\.0\.1:%d \(down\)" % b)
        t.wait(r"1 of 2 hosts up")
        t.wait(r"refused")
        # The other host's own tab: its processes, still updating (its clock moves).
        t.keys("Tab")
        s1 = t.wait(r"41001")
        clock = re.search(r"(\d\d:\d\d:\d\d)", s1.splitlines()[0]).group(1)
        t.wait(lambda s: re.search(r"(\d\d:\d\d:\d\d)", s.splitlines()[0]) and
               re.search(r"(\d\d:\d\d:\d\d)", s.splitlines()[0]).group(1) != clock)
        t.keys("Tab")
        t.wait(r"down: .*refused")
        t.keys("q")
        t.wait(r"EXIT=0")
    finally:
        t.close()


def case_bad_input():
    """TERM=dumb and no terminal exit 2 pointing to `gpuwatch -l`; a bad flag exits 2 naming
    it; an address that is not a gpuwatch daemon shows that host down with the reason."""
    r = subprocess.run([BIN, "top", "--demo"], capture_output=True, text=True, env=env(TERM="dumb"),
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and "gpuwatch -l" in r.stderr, "TERM=dumb: exit 2 (%d: %s)" % (r.returncode, r.stderr))
    r = subprocess.run([BIN, "top", "--demo"], capture_output=True, text=True, env=env(),
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and "not a terminal" in r.stderr, "no tty: exit 2 (%s)" % r.stderr)
    r = subprocess.run([BIN, "top", "--demo", "--bogus"], capture_output=True, text=True, env=env())
    check(r.returncode == 2 and "--bogus" in r.stderr, "a bad flag: exit 2 naming it (%s)" % r.stderr)
    r = subprocess.run([BIN, "top", "--demo", "--theme", "purple"], capture_output=True, text=True, env=env())
    check(r.returncode == 2 and "purple" in r.stderr, "a bad theme names it (%s)" % r.stderr)
    # A port nothing listens on, and one that answers HTTP but is no gpuwatch.
    dead = free_port()
    other = free_port()
    start([sys.executable, "-m", "http.server", str(other), "--bind", "127.0.0.1"],
          cwd=tempfile.gettempdir())
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", other), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    t = Tmux(["--remote", "127.0.0.1:%d,127.0.0.1:%d" % (dead, other)], 140, 30)
    try:
        s = t.wait(lambda s: "refused" in s and "not a gpuwatch" in s)
        t.keys("q")
    finally:
        t.close()


def case_replay():
    """A recording: the REPLAY label and host, pause, speed."""
    tmp = tempfile.mkdtemp()
    try:
        rec = os.path.join(tmp, "rec.jsonl")
        r = subprocess.run([BIN, "watch", "--demo", "-q", "-i", "200ms", "--duration", "3s",
                            "--jsonl", rec], capture_output=True, text=True, env=env())
        check(r.returncode == 0, "recording: %s" % r.stderr)
        t = Tmux(["--replay", rec], 120, 30)
        try:
            s = t.wait(r"REPLAY")
            t.wait(r"41001")
            t.keys("p")
            t.wait(r"PAUSED")
            t.keys("+")
            t.wait(r"2x PAUSED")
            t.keys("p")
            t.wait(lambda s: "PAUSED" not in s.splitlines()[0])
            t.wait(r"END")
            t.keys("q")
            t.wait(r"EXIT=0")
        finally:
            t.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    fn = globals().get("case_" + CASE)
    if fn is None:
        print("unknown case %r" % CASE)
        return 2
    try:
        fn()
    except Fail as e:
        print("FAIL %s: %s" % (CASE, e))
        return 1
    finally:
        kill_children()
    print("ok %s" % CASE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
