"""check_leak(): the sawtooth-aware leak detector over a series of per-iteration bytes."""
from dataclasses import dataclass
from typing import Sequence

from ._native import core


@dataclass(frozen=True)
class LeakVerdict:
    leak: bool
    bytes_per_iteration: float  # slope of the series' floor
    low: float  # its ~95 % interval
    high: float
    confidence: float
    iterations: int
    explanation: str

    def __bool__(self):
        return self.leak


def check_leak(series: Sequence[float], min_bytes_per_iteration=1024.0) -> LeakVerdict:
    """Whether memory sampled once per iteration leaks (docs/leaks.md's detector).

    It follows the floor of the series, so a training loop's sawtooth, a warm-up and a
    caching allocator's plateaus are not leaks. Needs 16 iterations or more.
    """
    return LeakVerdict(**core.check_leak([float(x) for x in series],
                                         float(min_bytes_per_iteration)))
