"""JAX: XLA's allocator numbers, and why nvidia-smi shows 75 % of the GPU taken.

    from gpuwatch import jax as gwj
    print(gwj.preallocation().text)          # pre-allocation detected, and what to set
    monitor = gwj.JaxMonitor(every_n_steps=50)
    for batch in data:
        state = train_step(state, batch)
        monitor.step()                       # every 50 steps: memory_stats(), socket, writer

jax is imported only when a function here is called (docs/python.md).
"""
import os
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional

from . import _adapter

STATS_KEYS = ("bytes_in_use", "peak_bytes_in_use", "bytes_limit", "bytes_reserved",
              "peak_bytes_reserved", "bytes_reservable_limit", "largest_alloc_size",
              "largest_free_block_bytes", "num_allocs", "pool_bytes", "peak_pool_bytes")
# What goes over GPUWATCH_SOCKET, in the words torch's adapter uses.
SOCKET_NAMES = {"allocated": "bytes_in_use", "peak_allocated": "peak_bytes_in_use",
                "reserved": "pool_bytes", "limit": "bytes_limit"}
DEFAULT_FRACTION = 0.75


def _jax():
    return _adapter.require("jax", "jax", "jax.Device.memory_stats(), XLA's allocator numbers",
                            "pip install 'jax[cuda12]'")


def parse_memory_stats(raw: Optional[Mapping[str, int]]) -> Dict[str, int]:
    """The STATS_KEYS entries ``raw`` (Device.memory_stats(): None on CPU) has."""
    return {k: int(raw[k]) for k in STATS_KEYS if raw and raw.get(k) is not None}


def _device(jax, device):
    if device is None or isinstance(device, int):
        return jax.local_devices()[device or 0]
    return device


def _index(d) -> int:
    """CUDA's index of a JAX device (its id on old JAX without local_hardware_id)."""
    local = getattr(d, "local_hardware_id", None)
    return int(d.id if local is None else local)


def memory_stats(device=None) -> Dict[str, int]:
    """bytes_in_use, peak_bytes_in_use, bytes_limit, ... of a local device (index or Device)."""
    jax = _jax()
    return parse_memory_stats(_device(jax, device).memory_stats())


@dataclass(frozen=True)
class Preallocation:
    preallocate: bool  # the environment leaves pre-allocation on
    fraction: float  # of total memory taken at the first operation
    allocator: str  # XLA_PYTHON_CLIENT_ALLOCATOR, "default" when unset
    total_bytes: Optional[int]  # NVML
    process_used_bytes: Optional[int]  # NVML, this process
    observed_fraction: Optional[float]  # process_used / total
    bytes_in_use: Optional[int]  # JAX's arrays
    bytes_limit: Optional[int]
    text: str

    def __bool__(self):
        return self.preallocate

    def __str__(self):
        return self.text


def _fraction(env: Mapping[str, str]) -> float:
    raw = env.get("XLA_CLIENT_MEM_FRACTION") or env.get("XLA_PYTHON_CLIENT_MEM_FRACTION")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return DEFAULT_FRACTION
    return value if 0 < value <= 1 else DEFAULT_FRACTION


def detect_preallocation(env: Mapping[str, str], total_bytes: Optional[int] = None,
                         process_used_bytes: Optional[int] = None,
                         bytes_in_use: Optional[int] = None,
                         bytes_limit: Optional[int] = None) -> Preallocation:
    """Pre-allocation from JAX's environment variables and the numbers measured (bytes)."""
    allocator = (env.get("XLA_PYTHON_CLIENT_ALLOCATOR") or "default").strip().lower()
    off = env.get("XLA_PYTHON_CLIENT_PREALLOCATE", "").strip().lower() in ("false", "0")
    preallocate = not off and allocator != "platform"
    fraction = _fraction(env)
    observed = (process_used_bytes / total_bytes
                if total_bytes and process_used_bytes is not None else None)
    holds = "" if observed is None else (
        f" This process holds {_adapter.gib(process_used_bytes)} of {_adapter.gib(total_bytes)} "
        f"({observed:.0%}) by NVML" + ("" if bytes_in_use is None else
                                       f"; its arrays take {_adapter.gib(bytes_in_use)}") + ".")
    if preallocate:
        text = (f"JAX pre-allocates {fraction:.0%} of the GPU's memory at its first operation "
                "(XLA_PYTHON_CLIENT_PREALLOCATE is not 'false'), so nvidia-smi shows that "
                f"pool as used whatever the arrays need.{holds} It is a pool, not a leak. "
                "To allocate on demand: XLA_PYTHON_CLIENT_PREALLOCATE=false; to share the GPU: "
                "a smaller XLA_CLIENT_MEM_FRACTION (older JAX: XLA_PYTHON_CLIENT_MEM_FRACTION), "
                "e.g. .3; XLA_PYTHON_CLIENT_ALLOCATOR=platform frees exactly, slowly.")
    else:
        why = ("XLA_PYTHON_CLIENT_ALLOCATOR=platform" if allocator == "platform"
               else "XLA_PYTHON_CLIENT_PREALLOCATE=false")
        text = (f"JAX allocates on demand ({why}): nvidia-smi's figure grows with the arrays "
                f"and the allocator's cache.{holds}")
    return Preallocation(preallocate, fraction, allocator, total_bytes, process_used_bytes,
                         observed, bytes_in_use, bytes_limit, text)


def preallocation(device=None, snapshot: _adapter.Snapshot = None,
                  env: Optional[Mapping[str, str]] = None) -> Preallocation:
    """detect_preallocation() for a local device, with NVML's numbers from ``snapshot``
    (a gpuwatch.snapshot() document or a callable returning one; default: read now)."""
    jax = _jax()
    d = _device(jax, device)
    stats = parse_memory_stats(d.memory_stats())
    devices = _adapter.read_snapshot(snapshot).get("devices", [])
    nvml = _adapter.find_device(devices, _index(d), visible=_adapter.cuda_visible())
    total = None if nvml is None else nvml["fields"].get("memory_total_bytes")
    return detect_preallocation(os.environ if env is None else env, total,
                                _adapter.process_used_bytes(nvml, os.getpid()),
                                stats.get("bytes_in_use"), stats.get("bytes_limit"))


class JaxMonitor:
    """Counts training steps; every ``every_n_steps`` records memory_stats() of the local GPUs.

    Records go to gpuwatch run's socket (mem and mark lines) when GPUWATCH_SOCKET is set,
    to ``self.timeline`` always, and to ``writer`` (add_scalar(tag, value, step)) when given.
    """

    def __init__(self, every_n_steps: int = 50, devices: Optional[List] = None, writer=None,
                 timeline: int = 1000):
        jax = _jax()
        self._devices = devices
        self.reporter = _adapter.Reporter("jax", jax.__version__, every_n_steps, writer, timeline)

    @property
    def timeline(self):
        return self.reporter.timeline

    def devices(self) -> List:
        if self._devices is not None:
            return [_device(_jax(), d) for d in self._devices]
        return [d for d in _jax().local_devices() if d.platform in ("gpu", "cuda", "rocm")]

    def step(self, step: Optional[int] = None) -> None:
        """One training step done (or: ``step`` is the number of steps done)."""
        if self.reporter.count(step):
            self.record()

    mark_step = step  # the name the other tools' loops use

    def record(self) -> None:
        for d in self.devices():
            stats = parse_memory_stats(d.memory_stats())
            self.reporter.memory(_index(d), {k: stats.get(v) for k, v in SOCKET_NAMES.items()})
        self.reporter.mark("step", self.reporter.step)

    def close(self) -> None:
        self.reporter.close()
