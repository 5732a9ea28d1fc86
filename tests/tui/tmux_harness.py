"""What the tmux tests of `gpuwatch top` share (top_tmux_test.py,
top_tmux_prometheus_test.py): the binary, source directory and case from the
command line (GPUWATCH_BINARY SOURCE_DIR CASE ...), a tmux server a case drives
with send-keys and reads with capture-pane, waits against a deadline (a loaded
machine is slower, never wrong), and the processes a case started, killed with
their groups at its end.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

BIN, SRC, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
DEADLINE = 60  # seconds any one screen may take to appear on 2 loaded cores
CHILDREN = []
SERVERS = [0]  # tmux servers started: each gets a socket of its own (a server being killed
               # would answer a new one started on its socket with "server exited unexpectedly")


def server_name(suffix=""):
    SERVERS[0] += 1
    return "gwtop-%d-%s%s-%d" % (os.getpid(), CASE, suffix, SERVERS[0])


class Fail(Exception):
    pass


def env(**extra):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    e.update(extra)
    return e


class Tmux:
    def __init__(self, args, width=100, height=30, environ=None):
        self.name = server_name()
        self.tmux = ["tmux", "-L", self.name, "-f", "/dev/null"]
        command = " ".join(shlex_quote(a) for a in [BIN, "top"] + args)
        # The pane stays after top exits, so that its last words can be read.
        run(self.tmux + ["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                         "sh", "-c", command + "; echo EXIT=$?; sleep 600"], environ or env())

    def screen(self):
        return subprocess.run(self.tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True,
                              text=True).stdout

    def program(self):
        """The executable top runs as: the file of the pane shell's child (gpuwatch
        starts gpuwatch-top or gpuwatch-full in its own place)."""
        shell = subprocess.run(self.tmux + ["display-message", "-p", "-t", "t", "#{pane_pid}"],
                               capture_output=True, text=True).stdout.strip()
        for entry in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % entry) as f:
                    ppid = f.read().rsplit(")", 1)[1].split()[1]
                if ppid == shell:
                    return os.path.basename(os.readlink("/proc/%s/exe" % entry))
            except (OSError, ValueError, IndexError):
                continue
        return None

    def escapes(self):
        return subprocess.run(self.tmux + ["capture-pane", "-p", "-e", "-t", "t"],
                              capture_output=True, text=True).stdout

    def keys(self, *keys):
        for k in keys:
            run(self.tmux + ["send-keys", "-t", "t", k])
            time.sleep(0.05)

    def literal(self, text):
        run(self.tmux + ["send-keys", "-t", "t", "-l", text])

    def resize(self, width, height):
        run(self.tmux + ["resize-window", "-t", "t", "-x", str(width), "-y", str(height)])

    def wait(self, what, timeout=DEADLINE):
        """Waits until `what` (a regex, or a function of the screen) holds; returns the screen."""
        test = what if callable(what) else (lambda s: re.search(what, s, re.M) is not None)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.screen()
            if test(s):
                return s
            time.sleep(0.2)
        raise Fail("waited %ds for %r; the screen:\n%s" % (timeout, what, self.screen()))

    def close(self):
        subprocess.run(self.tmux + ["kill-server"], capture_output=True)


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def run(cmd, environ=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=environ)
    if r.returncode != 0:
        raise Fail("%s: %s" % (" ".join(cmd), r.stderr))
    return r


def check(cond, message, screen=""):
    if not cond:
        raise Fail(message + ("\n" + screen if screen else ""))


def rows(screen, pattern):
    return [l for l in screen.splitlines() if re.search(pattern, l)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, **kw):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, **kw)
    CHILDREN.append(p)
    return p


def kill_children():
    """Every process a case started (its whole group), gone."""
    for p in CHILDREN:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                p.kill()
            p.wait()
