"""Collector: mean / min / max / last of every GPU metric over windows you tag.

    collector = gpuwatch.Collector(sampler)
    with collector("train"):
        for epoch in range(3):
            with collector("epoch"):
                ...                                   # the training
                metrics = collector.collect()         # this epoch's and the run's windows
    # metrics["train/epoch/gpu0/memory_used_bytes/mean"], ".../max", ".../last", ...

The statistics are kept in C++ as the sampler publishes snapshots, so a window
costs no Python while it runs. Keys: ``TAGS/gpuN/FIELD/STAT`` and
``TAGS/host/FIELD/STAT``, FIELD a catalogue key (docs/json.md) in base units,
STAT one of mean, min, max, last, count.
"""
import contextlib
import threading
from typing import Dict, List, Optional, Tuple

from ._errors import InvalidArgument
from .sampling import Sampler

_STATS = ("mean", "min", "max", "last", "count")


class Collector:
    """Windows of metrics from a Sampler (its own one at ``interval`` seconds if none is given)."""

    def __init__(self, sampler: Optional[Sampler] = None, interval=0.5, **sampler_options):
        self._own = sampler is None
        self._sampler = sampler if sampler is not None else Sampler(interval=interval,
                                                                    **sampler_options)
        self._lock = threading.Lock()
        self._stack: List[Tuple[str, int]] = []  # (tag path, window), outermost first

    @property
    def sampler(self) -> Sampler:
        return self._sampler

    def close(self):
        with self._lock:
            for _, window in self._stack:
                self._sampler._close_window(window)
            self._stack.clear()
        if self._own:
            self._sampler.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextlib.contextmanager
    def __call__(self, tag: str):
        """A window named ``tag`` inside the windows already open."""
        if not tag or "/" in tag:
            raise InvalidArgument(f"tag {tag!r}: a non-empty name without '/'")
        window = self._sampler._open_window()
        with self._lock:
            path = "/".join([t for t, _ in self._stack[-1:]] + [tag])
            self._stack.append((path, window))
        try:
            yield self
        finally:
            with self._lock:
                self._stack = [(p, w) for p, w in self._stack if w != window]
            self._sampler._close_window(window)

    def collect(self, reset=False) -> Dict[str, float]:
        """The statistics of every open window since it opened (or its last reset)."""
        with self._lock:
            stack = list(self._stack)
        out: Dict[str, float] = {}
        for path, window in stack:
            for key, values in self._sampler._window_stats(window, reset).items():
                for stat, v in zip(_STATS, values):
                    out[f"{path}/{key}/{stat}"] = v
        return out
