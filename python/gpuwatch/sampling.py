"""Snapshots of every GPU, and the C++ sampler running on its own thread.

The sampler and its analysis (alert rules, diagnoses, leak detection) run in C++
without the GIL. Python reads what they published; events are queued in C++ and
handed to Python callbacks by a Python thread, never by a C++ one.
"""
import json
import threading
from dataclasses import dataclass
from typing import Callable, List, Optional

from ._native import DEMO_DIR, core


def _source(demo, scenario, replay):
    return bool(demo or scenario), scenario or "", replay or ""


def snapshot(demo=False, scenario=None, replay=None, processes=True, host_proc=None) -> dict:
    """Read every GPU once: the document `gpuwatch --json` prints (docs/json.md).

    ``demo=True`` reads the simulated demo fleet; ``scenario`` a fake-NVML scenario file.
    """
    d, s, r = _source(demo, scenario, replay)
    return json.loads(core.read_once(d, s, r, DEMO_DIR, host_proc or "", processes))


@dataclass(frozen=True)
class Event:
    """An alert firing or resolving, a diagnosis, a leak, a GPU lost (docs/outputs.md)."""

    time: str
    kind: str
    severity: str
    source: str
    gpu: Optional[int]
    message: str
    value: Optional[float]
    raw: dict

    @staticmethod
    def from_json(text: str) -> "Event":
        d = json.loads(text)
        return Event(
            time=d.get("time", ""),
            kind=d.get("kind", ""),
            severity=d.get("severity", ""),
            source=d.get("source", ""),
            gpu=d.get("gpu"),
            message=d.get("message", ""),
            value=d.get("value"),
            raw=d,
        )


class Sampler:
    """The C++ sampler: reads every GPU each ``interval`` seconds on its own thread.

    Use as a context manager, or call close(). Thread-safe.
    """

    def __init__(self, interval=1.0, demo=False, scenario=None, replay=None, processes=True,
                 rules=None, host_proc=None):
        d, s, r = _source(demo, scenario, replay)
        self._m = core.Monitor(d, s, r, DEMO_DIR, host_proc or "", float(interval), processes,
                               rules or "")
        self._sequence = 0
        self._callbacks: List[Callable[[Event], None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Stops the event thread and the sampler (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._m.close()

    def latest(self) -> Optional[dict]:
        """The newest snapshot, or None before the first."""
        got = self._m.latest()
        return None if got is None else json.loads(got[1])

    def wait(self, timeout=5.0) -> Optional[dict]:
        """Waits for a snapshot newer than the last one this method returned."""
        got = self._m.wait_newer(self._sequence, float(timeout))
        if got is None:
            return None
        self._sequence = got[0]
        return json.loads(got[1])

    def events(self) -> List[Event]:
        """The events since the previous call (or since the sampler started)."""
        return [Event.from_json(t) for t in self._m.take_events()]

    @property
    def dropped_events(self) -> int:
        """Events dropped because nobody took them (the queue keeps 10000)."""
        return self._m.dropped_events()

    def on_event(self, callback: Callable[[Event], None]) -> None:
        """Calls ``callback(event)`` for every event, from a Python thread of gpuwatch's.

        An exception in a callback is printed and does not stop the others.
        """
        with self._lock:
            self._callbacks.append(callback)
            if self._thread is None:
                self._thread = threading.Thread(target=self._deliver, name="gpuwatch-events",
                                                daemon=True)
                self._thread.start()

    def _deliver(self):
        import traceback

        seen = 0
        while not self._stop.is_set():
            got = self._m.wait_newer(seen, 0.25)  # releases the GIL while it waits
            if got is not None:
                seen = got[0]
            for event in self.events():
                with self._lock:
                    callbacks = list(self._callbacks)
                for cb in callbacks:
                    try:
                        cb(event)
                    except Exception:  # a callback's bug must not stop delivery
                        traceback.print_exc()

    # Used by Collector.
    def _open_window(self) -> int:
        return self._m.open_window()

    def _window_stats(self, window: int, reset: bool) -> dict:
        return self._m.window_stats(window, reset)

    def _close_window(self, window: int) -> None:
        self._m.close_window(window)
