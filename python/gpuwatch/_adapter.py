"""What the framework adapters share: importing the framework, finding a GPU in a snapshot,
and reporting steps and memory (GPUWATCH_SOCKET, a bounded timeline, a TensorBoard writer).

Nothing here imports a framework at module level.
"""
import collections
import importlib
import os
import re
import time
from typing import Callable, Iterable, List, Mapping, Optional, Union

from ._errors import InvalidArgument
from .report import JobSocket

Snapshot = Union[None, dict, Callable[[], dict]]


def require(module: str, adapter: str, needs: str, install: str):
    """Imports ``module`` or raises ImportError saying what to install and why."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"gpuwatch.{adapter} needs {module} ({needs}), which does not import: "
                          f"{e}. Install it with `{install}`.") from e


def read_snapshot(snapshot: Snapshot) -> dict:
    """``snapshot`` itself, what it returns when callable, or gpuwatch.snapshot() when None."""
    if snapshot is None:
        from .sampling import snapshot as read

        return read()
    return snapshot() if callable(snapshot) else snapshot


_PCI = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)")


def parse_pci(bus_id: str):
    """(domain, bus, device) of "00000000:18:00.0", or None."""
    m = _PCI.fullmatch((bus_id or "").strip())
    return None if m is None else tuple(int(m.group(i), 16) for i in (1, 2, 3))


def _plain_uuid(uuid) -> str:
    text = str(uuid or "").strip().lower()
    return text[4:] if text.startswith("gpu-") else text


def find_device(devices: List[dict], index: int, uuid=None, pci=None,
                visible: Optional[str] = None) -> Optional[dict]:
    """The snapshot device (docs/json.md) that a framework's device ``index`` is.

    By UUID or (domain, bus, device) when the framework says them; otherwise by
    ``visible`` (CUDA_VISIBLE_DEVICES: indices or UUID prefixes) and the index,
    which assumes CUDA numbers GPUs in PCI order, as `gpuwatch run --gpus` makes it.
    """
    if uuid:
        for d in devices:
            if _plain_uuid(d["fields"].get("uuid")) == _plain_uuid(uuid):
                return d
    if pci is not None:
        for d in devices:
            if parse_pci(d["fields"].get("pci_bus_id")) == tuple(pci):
                return d
    entries = [e.strip() for e in visible.split(",")] if visible else None
    if entries is not None:
        if not 0 <= index < len(entries):
            return None
        entry = entries[index]
        if entry.isdigit():
            index = int(entry)
        else:
            prefix = _plain_uuid(entry)
            return next((d for d in devices
                         if _plain_uuid(d["fields"].get("uuid")).startswith(prefix)), None)
    return next((d for d in devices if d.get("index") == index), None)


def process_used_bytes(device: Optional[dict], pid: int) -> Optional[int]:
    """What NVML says ``pid`` uses on ``device`` (or one of its MIG devices); None if absent."""
    if device is None:
        return None
    found = None  # a process may be listed twice (compute and graphics): the larger
    for holder in [device] + list(device.get("mig_devices") or []):
        for p in holder.get("processes") or []:
            used = (p.get("fields") or {}).get("used_memory_bytes")
            if p.get("pid") == pid and used is not None:
                found = max(found or 0, int(used))
    return found


def gib(n) -> str:
    return "?" if n is None else f"{n / 2**30:.2f} GiB"


class Reporter:
    """Counts steps and sends what an adapter measured where it belongs.

    Under `gpuwatch run` (GPUWATCH_SOCKET set) memory and marks go to its socket; the
    last ``timeline`` records stay in ``self.timeline`` either way; scalars go to
    ``writer`` (anything with add_scalar(tag, value, step), e.g. TensorBoard's
    SummaryWriter) when there is one. Not thread-safe: call it from the training loop.
    """

    def __init__(self, framework: str, version: str, every_n_steps: int = 50, writer=None,
                 timeline: int = 1000, socket: Optional[JobSocket] = None):
        if every_n_steps < 1:
            raise InvalidArgument(f"every_n_steps={every_n_steps}: expected 1 or more")
        self.framework = framework
        self.every_n_steps = every_n_steps
        self.writer = writer
        self.step = 0
        self.timeline = collections.deque(maxlen=timeline)
        self.socket = socket if socket is not None else JobSocket.from_env()
        if self.socket is not None:
            self.socket.hello(framework, version)

    def count(self, step: Optional[int] = None) -> bool:
        """Advances the step counter (or sets it to ``step``); True every ``every_n_steps``."""
        self.step = self.step + 1 if step is None else int(step)
        return self.step % self.every_n_steps == 0

    def memory(self, device: int, counters: Mapping[str, Optional[float]],
               socket_keys: Optional[Iterable[str]] = None, uuid: Optional[str] = None) -> None:
        """Records one device's counters (bytes) at the current step; ``uuid``, the device's
        when the framework knows it, files them under the right GPU whatever
        CUDA_VISIBLE_DEVICES renumbered."""
        present = {k: v for k, v in counters.items() if v is not None}
        self.timeline.append({"time": time.time(), "step": self.step, "device": device, **present})
        if self.socket is not None:
            keys = present if socket_keys is None else [k for k in socket_keys if k in present]
            self.socket.memory(self.framework, device, {k: present[k] for k in keys}, uuid=uuid)
        self.scalars({f"gpuwatch/{self.framework}/device{device}/{k}": v
                      for k, v in present.items()})

    def mark(self, kind: str, value) -> None:
        if self.socket is not None:
            self.socket.mark(kind, value)

    def scalars(self, values: Mapping[str, float], step: Optional[int] = None) -> None:
        if self.writer is not None:
            for tag, v in values.items():
                self.writer.add_scalar(tag, v, self.step if step is None else step)

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()


def cuda_visible() -> Optional[str]:
    return os.environ.get("CUDA_VISIBLE_DEVICES")

