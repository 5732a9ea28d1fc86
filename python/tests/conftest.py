"""Shared fixtures: scenario paths, and a lease directory of each test's own;
for the adapters, a GPUWATCH_SOCKET server and a TensorBoard-like writer."""
import os
import shutil
import socket
import tempfile
import threading

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scenario(name):
    return os.path.join(ROOT, "scenarios", "test", name)


@pytest.fixture(autouse=True)
def own_runtime_dir(tmp_path, monkeypatch):
    """Leases of the machine never leak into a test, nor a test's into the machine."""
    monkeypatch.setenv("GPUWATCH_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.delenv("GPUWATCH_SOCKET", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


class LineServer:
    """A GPUWATCH_SOCKET as `gpuwatch run` listens on it: keeps every line its clients write."""

    def __init__(self, path):
        self.path = path
        self._lines = []
        self._cond = threading.Condition()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(path)
        self._sock.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn):
        with conn, conn.makefile("r") as f:
            for line in f:
                with self._cond:
                    self._lines.append(line.rstrip("\n"))
                    self._cond.notify_all()

    def wait_for(self, count, timeout=5.0):
        """The lines received, once there are ``count`` (or after ``timeout`` seconds)."""
        with self._cond:
            self._cond.wait_for(lambda: len(self._lines) >= count, timeout)
            return list(self._lines)


@pytest.fixture
def job_socket(monkeypatch):
    """A listening socket named by GPUWATCH_SOCKET (a short path: Unix sockets take 107 bytes)."""
    directory = tempfile.mkdtemp(prefix="gw-")
    server = LineServer(os.path.join(directory, "job.sock"))
    monkeypatch.setenv("GPUWATCH_SOCKET", server.path)
    yield server
    server._sock.close()
    shutil.rmtree(directory)


class ScalarWriter:
    """The part of TensorBoard's SummaryWriter the adapters use."""

    def __init__(self):
        self.scalars = []

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, value, step))
