"""PyTorch: the caching allocator's numbers, why nvidia-smi shows more, leaks, and OOM reports.

    from gpuwatch import torch as gwt
    monitor = gwt.TorchMonitor(every_n_steps=50, writer=tensorboard_writer)
    with gwt.oom_report(monitor=monitor):
        for batch in loader:
            ...
            monitor.step()                 # every 50 steps: allocator numbers, socket, writer
    print(gwt.explain())                   # NVML's figure for this process, split up

torch is imported only when a function here is called (docs/python.md).
"""
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional

from . import _adapter
from ._errors import InvalidArgument, Unavailable
from ._torch_oom import is_oom, oom_report

__all__ = ["Explanation", "TorchMonitor", "all_memory_stats", "device_uuid", "explain",
           "explain_gap", "is_oom", "leak_check", "memory_stats", "oom_report",
           "parse_memory_stats"]

# Our name -> torch.cuda.memory_stats() key. A key a torch version lacks is left out.
STATS_KEYS = {
    "allocated": "allocated_bytes.all.current", "peak_allocated": "allocated_bytes.all.peak",
    "reserved": "reserved_bytes.all.current", "peak_reserved": "reserved_bytes.all.peak",
    "active": "active_bytes.all.current", "peak_active": "active_bytes.all.peak",
    "inactive_split": "inactive_split_bytes.all.current",
    "peak_inactive_split": "inactive_split_bytes.all.peak",
    "num_ooms": "num_ooms", "num_alloc_retries": "num_alloc_retries"}
# peak_reserved and peak_inactive_split let `gpuwatch sweep` tell the cache the allocator frees
# when short of memory (reserved - allocated - inactive split) from what a batch needs.
SOCKET_KEYS = ("allocated", "reserved", "active", "peak_allocated", "peak_reserved",
               "peak_inactive_split")
# The fields of a Collector's windows written to the writer (all of them would be thousands).
COLLECTOR_FIELDS = ("memory_used_bytes", "utilization_gpu_ratio", "power_draw_watts",
                    "temperature_gpu_celsius")


def _torch():
    return _adapter.require("torch", "torch", "PyTorch's CUDA allocator statistics",
                            "pip install torch")


def parse_memory_stats(raw: Mapping[str, float]) -> Dict[str, int]:
    """The entries of STATS_KEYS that ``raw`` (torch.cuda.memory_stats()) has."""
    return {name: int(raw[key]) for name, key in STATS_KEYS.items() if raw.get(key) is not None}


def _index(torch, device) -> int:
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "cuda":
        raise InvalidArgument(f"device {device!r}: not a CUDA device")
    return torch.cuda.current_device() if d.index is None else d.index


def _cuda(torch):
    if not torch.cuda.is_available():
        raise Unavailable(f"torch {torch.__version__} sees no CUDA device (a CPU-only build, "
                          "no GPU, or CUDA_VISIBLE_DEVICES hides them all)")


def device_uuid(device: int) -> Optional[str]:
    """CUDA device ``device``'s UUID (torch >= 2.1): what names it for NVML and gpuwatch
    whatever CUDA_VISIBLE_DEVICES renumbered; None where torch cannot tell (no CUDA)."""
    try:
        uuid = getattr(_torch().cuda.get_device_properties(device), "uuid", None)
    except Exception:  # noqa: BLE001 - no CUDA device, or a CPU-only torch
        return None
    return str(uuid) if uuid else None


def memory_stats(device=None) -> Dict[str, int]:
    """allocated, reserved, active and their peaks (bytes), num_ooms, num_alloc_retries.

    gpuwatch.Unavailable without a CUDA device; {} before CUDA's first use (torch's answer).
    """
    torch = _torch()
    _cuda(torch)
    return parse_memory_stats(torch.cuda.memory_stats(_index(torch, device)))


@dataclass(frozen=True)
class Explanation:
    """NVML's memory for this process on one GPU, split into what torch knows and the rest."""

    device: int  # CUDA's index
    gpu: Optional[int]  # NVML's index, None when the GPU was not found
    process_used: Optional[int]  # NVML, bytes; None when NVML lists no such process
    reserved: int
    allocated: int
    context_and_libraries: Optional[int]  # process_used - reserved
    allocator_cache: int  # reserved - allocated
    text: str

    def __str__(self):
        return self.text


def explain_gap(process_used: Optional[int], reserved: int, allocated: int, device: int = 0,
                gpu: Optional[int] = None) -> Explanation:
    """The arithmetic and the words of explain(), from plain numbers (bytes)."""
    cache = reserved - allocated
    where = f"CUDA device {device}" + ("" if gpu is None else f" (GPU {gpu} for nvidia-smi)")
    lines = []
    if process_used is None:
        lines.append(f"{where}: NVML lists no memory for this process (pid {os.getpid()}) there; "
                     "in a container it may see other pids, or the GPU was not found")
    else:
        lines.append(f"{where}: this process uses {_adapter.gib(process_used)} "
                     "(NVML, what nvidia-smi shows)")
    lines.append(f"  {_adapter.gib(reserved)}  reserved by torch's caching allocator "
                 "(torch.cuda.memory_reserved)")
    lines.append(f"    {_adapter.gib(allocated)}  in live tensors (torch.cuda.memory_allocated)")
    lines.append(f"    {_adapter.gib(cache)}  cached by the allocator for reuse, free for new "
                 "tensors (reserved - allocated; torch.cuda.empty_cache() frees it)")
    gap = None if process_used is None else process_used - reserved
    if gap is not None and gap >= 0:
        lines.append(f"  {_adapter.gib(gap)}  outside torch's allocator: the CUDA context and "
                     "kernels, cuBLAS/cuDNN workspaces, NCCL buffers, other allocators "
                     "(used - reserved)")
    elif gap is not None:
        lines.append(f"  NVML's figure is {_adapter.gib(-gap)} below torch's reserved: the "
                     "snapshot is older than torch's numbers, or NVML counts another pid")
    return Explanation(device, gpu, process_used, reserved, allocated, gap, cache,
                       "\n".join(lines))


def _nvml_device(torch, index: int, devices: List[dict]) -> Optional[dict]:
    props = torch.cuda.get_device_properties(index)
    uuid = getattr(props, "uuid", None)  # torch >= 2.1
    pci = None
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        pci = (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)  # torch >= 2.4
    return _adapter.find_device(devices, index, uuid=uuid, pci=pci,
                                visible=_adapter.cuda_visible())


def explain(device=None, snapshot: _adapter.Snapshot = None) -> Explanation:
    """Why nvidia-smi shows more than torch.cuda.memory_allocated() for this process.

    ``snapshot``: a gpuwatch.snapshot() document or a callable returning one (default: now).
    """
    torch = _torch()
    _cuda(torch)
    index = _index(torch, device)
    stats = parse_memory_stats(torch.cuda.memory_stats(index))
    nvml = _nvml_device(torch, index, _adapter.read_snapshot(snapshot).get("devices", []))
    return explain_gap(_adapter.process_used_bytes(nvml, os.getpid()), stats.get("reserved", 0),
                       stats.get("allocated", 0), index, None if nvml is None else nvml["index"])


class TorchMonitor:
    """Counts training steps; every ``every_n_steps`` records memory_stats() of ``devices``
    (CUDA indices; default: the current device, once CUDA is in use).

    Records go to gpuwatch run's socket (mem, mark step) under GPUWATCH_SOCKET, to
    ``self.timeline`` (the last ``timeline``), and to ``writer`` (add_scalar(tag, value,
    step)) with a ``collector``'s windows of ``collector_fields``. ``stats(device)``
    replaces memory_stats (tests, other counters).
    """

    def __init__(self, every_n_steps: int = 50, devices: Optional[List[int]] = None, writer=None,
                 collector=None, timeline: int = 1000,
                 stats: Optional[Callable[[int], Mapping[str, int]]] = None,
                 collector_fields=COLLECTOR_FIELDS):
        torch = _torch()
        self._devices = devices
        self._stats = stats or memory_stats
        self.collector = collector
        self.collector_fields = set(collector_fields)
        self.reporter = _adapter.Reporter("torch", torch.__version__.split("+")[0], every_n_steps,
                                          writer, timeline)

    @property
    def timeline(self):
        return self.reporter.timeline

    def devices(self) -> List[int]:
        if self._devices is not None:
            return self._devices
        torch = _torch()
        # Only CUDA devices this process has touched: reading others would create contexts.
        return [torch.cuda.current_device()] if torch.cuda.is_initialized() else []

    def step(self, step: Optional[int] = None) -> None:
        """One training step done (or: ``step`` is the number of steps done)."""
        if self.reporter.count(step):
            self.record()

    mark_step = step  # the name the other tools' loops use

    def record(self) -> None:
        for device in self.devices():
            self.reporter.memory(device, self._stats(device), SOCKET_KEYS,
                                 uuid=device_uuid(device))
        self.reporter.mark("step", self.reporter.step)
        if self.collector is not None:
            self.reporter.scalars({f"gpuwatch/{k}": v for k, v in self.collector.collect().items()
                                   if k.rsplit("/", 2)[-2] in self.collector_fields})

    def close(self) -> None:
        self.reporter.close()


def leak_check(fn: Callable[[], object], iterations: int = 100, device=None, warmup: int = 5,
               min_bytes_per_iteration: float = 1024, measure: Optional[Callable[[], float]] = None,
               synchronize: Optional[Callable[[], object]] = None):
    """Calls ``fn()`` warmup + iterations times; a gpuwatch.LeakVerdict over the allocated
    bytes after each call past the warm-up. ``measure`` (default torch.cuda.memory_allocated)
    and ``synchronize`` (default torch.cuda.synchronize, with the default measure only)
    replace torch's for other counters and for tests.
    """
    from .leaks import check_leak

    if iterations < 16:
        raise InvalidArgument(f"iterations={iterations}: a leak check needs 16 or more")
    if measure is None:
        torch = _torch()
        _cuda(torch)
        index = _index(torch, device)
        measure = lambda: torch.cuda.memory_allocated(index)  # noqa: E731
        synchronize = synchronize or (lambda: torch.cuda.synchronize(index))
    series = []
    for i in range(warmup + iterations):
        fn()
        if synchronize is not None:
            synchronize()
        if i >= warmup:
            series.append(float(measure()))
    return check_leak(series, min_bytes_per_iteration)


def all_memory_stats() -> Dict[str, Dict[str, int]]:
    """memory_stats() of every CUDA device, by index."""
    torch = _torch()
    _cuda(torch)
    return {str(i): parse_memory_stats(torch.cuda.memory_stats(i))
            for i in range(torch.cuda.device_count())}
