"""gpuwatch: GPU memory, utilization and health for deep-learning jobs.

    import gpuwatch
    snap = gpuwatch.snapshot()                     # every GPU and process, now
    with gpuwatch.Sampler(interval=0.5) as s:      # the C++ sampler on its own thread
        s.on_event(print)                          # alerts, diagnoses, leaks
        collector = gpuwatch.Collector(s)
        with collector("train"):
            ...
            print(collector.collect())
    gpuwatch.select(2, min_free="40GiB")           # the least busy GPUs
    gpuwatch.check_leak(allocated_bytes_per_step)  # the sawtooth-aware leak test

Framework adapters: gpuwatch.torch, gpuwatch.lightning, gpuwatch.keras, gpuwatch.jax
(each imports its framework only when used). docs/python.md.
"""
from ._errors import (Error, InvalidArgument, NotEnoughGpus, NotFound, PermissionDenied,
                      Unavailable)
from .collector import Collector
from .leaks import LeakVerdict, check_leak
from .report import JobSocket
from .sampling import Event, Sampler, snapshot
from .selection import Gpu, select
from .sweep import sweep

__version__ = "0.1.0"

__all__ = [
    "Collector", "Error", "Event", "Gpu", "InvalidArgument", "JobSocket", "LeakVerdict",
    "NotEnoughGpus", "NotFound", "PermissionDenied", "Sampler", "Unavailable", "check_leak",
    "select", "snapshot", "sweep",
]
