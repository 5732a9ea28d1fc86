"""JobSocket: tells `gpuwatch run` (or `serve --socket`) about the framework's memory and steps.

Under `gpuwatch run`, GPUWATCH_SOCKET names a Unix socket; each line is a verb and
key=value words (docs/run.md). Without it, JobSocket.from_env() returns None. A send
that fails closes the connection quietly: reporting never disturbs training.
"""
import os
import re
import socket
import threading
from typing import Mapping, Optional

_WORD = re.compile(r"[^A-Za-z0-9_\-./:]")


def _word(value) -> str:
    return _WORD.sub("_", str(value))[:200] or "_"


class JobSocket:
    def __init__(self, path: str):
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(path)

    @staticmethod
    def from_env() -> Optional["JobSocket"]:
        path = os.environ.get("GPUWATCH_SOCKET")
        if not path:
            return None
        try:
            return JobSocket(path)
        except OSError:
            return None

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def _send(self, line: str) -> None:
        with self._lock:
            if self._sock is None:
                return
            try:
                self._sock.sendall((line[:4095] + "\n").encode())
            except OSError:
                self._sock.close()
                self._sock = None

    def hello(self, framework: str, version: str) -> None:
        self._send(f"hello framework={_word(framework)} version={_word(version)} pid={os.getpid()}")

    def memory(self, framework: str, device: int, counters: Mapping[str, float],
               uuid: Optional[str] = None) -> None:
        """``uuid``: the device's, which names the GPU whatever CUDA_VISIBLE_DEVICES did."""
        words = " ".join(f"{_word(k)}={int(v)}" for k, v in counters.items() if v is not None)
        named = f" uuid={_word(uuid)}" if uuid else ""
        self._send(f"mem framework={_word(framework)} device={int(device)}{named} {words}")

    def mark(self, kind: str, value) -> None:
        if kind not in ("step", "epoch", "phase"):
            raise ValueError(f"mark {kind!r}: one of step, epoch, phase")
        self._send(f"mark {kind}={_word(value)}")

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
