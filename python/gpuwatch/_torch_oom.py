"""gpuwatch.torch's oom_report: on CUDA out-of-memory, who held what, written to a file."""
import contextlib
import json
import os
import sys
import time
from typing import Callable, Optional

from . import _adapter


def is_oom(error: BaseException) -> bool:
    """torch.cuda.OutOfMemoryError (torch >= 1.13), or an older torch's RuntimeError saying so."""
    torch = sys.modules.get("torch")
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if oom is not None and isinstance(error, oom):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error)


def _part(read: Callable[[], object]):
    try:
        return read()
    except Exception as e:  # the report is written whatever part fails
        return {"error": f"{type(e).__name__}: {e}"}


class oom_report(contextlib.ContextDecorator):  # noqa: N801 - used like a function
    """On CUDA out-of-memory inside it: writes a JSON report, says where, re-raises.

    The report (``path``, default gpuwatch-oom-PID.json): the error, ``monitor``'s recent
    timeline, memory_stats() of every CUDA device, and ``snapshot`` (default
    gpuwatch.snapshot(): who holds what on every GPU). Works as ``with`` and as a decorator.
    """

    def __init__(self, path: Optional[str] = None, monitor=None,
                 snapshot: _adapter.Snapshot = None):
        self.path = path
        self.monitor = monitor
        self.snapshot = snapshot
        self.written: Optional[str] = None

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if error is None or not is_oom(error):
            return False
        from .torch import all_memory_stats

        path = self.path or f"gpuwatch-oom-{os.getpid()}.json"
        doc = {
            "schema": "gpuwatch.oom/1",
            "time": time.time(),
            "pid": os.getpid(),
            "error": f"{type(error).__name__}: {error}",
            "timeline": list(self.monitor.timeline) if self.monitor is not None else [],
            "memory_stats": _part(all_memory_stats),
            "snapshot": _part(lambda: _adapter.read_snapshot(self.snapshot)),
        }
        try:
            with open(path, "w") as f:
                json.dump(doc, f, indent=1)
            self.written = path
            print(f"gpuwatch: CUDA out of memory; the memory timeline, torch's numbers and every "
                  f"GPU's processes are in {os.path.abspath(path)}", file=sys.stderr)
        except OSError as e:
            print(f"gpuwatch: CUDA out of memory; the report could not be written to {path}: {e}",
                  file=sys.stderr)
        return False
