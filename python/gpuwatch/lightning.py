"""Lightning: GpuWatchCallback logs GPU metrics with the trainer's loggers every N steps.

    from gpuwatch.lightning import GpuWatchCallback
    trainer = lightning.Trainer(accelerator="gpu", callbacks=[GpuWatchCallback(every_n_steps=50)])

Per GPU the trainer uses: memory used (NVML), utilization, this process's memory; torch's
allocator numbers for this rank's device. Under `gpuwatch run` it also sends torch's
numbers and step / epoch marks over GPUWATCH_SOCKET. lightning.pytorch (or the older
pytorch_lightning) is imported when GpuWatchCallback is first used, not with this module.
"""
import functools
import importlib
import os
import warnings
from typing import Dict, Optional

from . import _adapter
from ._errors import Error, InvalidArgument


def _lightning():
    errors = []
    for name in ("lightning.pytorch", "pytorch_lightning"):
        try:
            return importlib.import_module(name)
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise ImportError("gpuwatch.lightning needs lightning.pytorch or pytorch_lightning (the "
                      "Callback base class of GpuWatchCallback), and neither imports ("
                      + "; ".join(errors) + "). Install it with `pip install lightning`.")


def gpu_metrics(snapshot: Optional[dict], devices: Dict[int, Optional[dict]], own: Optional[int],
                pid: int, prefix: str = "gpuwatch/") -> Dict[str, float]:
    """NVML's numbers for the trainer's GPUs (CUDA index -> snapshot device), as flat metrics."""
    out: Dict[str, float] = {}
    if snapshot is None:
        return out
    for index, device in devices.items():
        if device is None:
            continue
        fields = device["fields"]
        for key in ("memory_used_bytes", "memory_total_bytes", "utilization_gpu_ratio"):
            if isinstance(fields.get(key), (int, float)):
                out[f"{prefix}gpu{index}/{key}"] = fields[key]
        used = _adapter.process_used_bytes(device, pid) if index == own else None
        if used is not None:
            out[f"{prefix}gpu{index}/process_used_bytes"] = used
    return out


@functools.lru_cache(maxsize=None)
def _build():
    pl = _lightning()
    from . import torch as gwt
    from .sampling import Sampler

    class GpuWatchCallback(pl.Callback):
        """Every ``every_n_steps`` optimizer steps, GPU and allocator metrics to the loggers.

        ``sampler``: a gpuwatch.Sampler to read (default: one of its own at ``interval``
        seconds, started with training and closed after it; without NVML, a warning and
        torch's numbers only).
        """

        def __init__(self, every_n_steps: int = 50, sampler: Optional[Sampler] = None,
                     interval: float = 1.0, prefix: str = "gpuwatch/"):
            super().__init__()
            if every_n_steps < 1:
                raise InvalidArgument(f"every_n_steps={every_n_steps}: expected 1 or more")
            self.every_n_steps = every_n_steps
            self.prefix = prefix
            self.interval = interval
            self._sampler = sampler
            self._own_sampler = False
            self._reporter: Optional[_adapter.Reporter] = None
            self._last_step = -1
            self.last_metrics: Dict[str, float] = {}

        def _cuda(self, trainer):
            """(the CUDA indices the trainer uses, this rank's one), or ([], None) off CUDA."""
            root = getattr(trainer.strategy, "root_device", None)
            if root is None or root.type != "cuda":
                return [], None
            own = root.index or 0
            return [int(i) for i in (getattr(trainer, "device_ids", None) or [own])], own

        def on_train_start(self, trainer, pl_module):
            torch = gwt._torch()
            if self._sampler is None:
                try:
                    self._sampler, self._own_sampler = Sampler(interval=self.interval), True
                except Error as e:  # no driver: torch's numbers are still worth logging
                    warnings.warn(f"gpuwatch: no NVML readings, logging torch's numbers only: {e}")
            self._reporter = _adapter.Reporter("torch", torch.__version__.split("+")[0],
                                               self.every_n_steps)

        def metrics(self, trainer, torch_stats: Dict[str, int]) -> Dict[str, float]:
            """NVML's numbers for the trainer's GPUs and ``torch_stats``, as logged."""
            torch = gwt._torch()
            ids, own = self._cuda(trainer)
            snap = self._sampler.latest() if self._sampler is not None else None
            nvml = [] if snap is None else snap.get("devices", [])
            found = {i: gwt._nvml_device(torch, i, nvml) for i in ids} if nvml else {}
            out = gpu_metrics(snap, found, own, os.getpid(), self.prefix)
            out.update({f"{self.prefix}torch/{k}": v for k, v in torch_stats.items()})
            return out

        def on_train_batch_end(self, trainer, pl_module, *args, **kwargs):
            step = trainer.global_step
            if step == self._last_step or step % self.every_n_steps:
                return  # gradient accumulation repeats a step; log each once
            self._last_step = step
            _, own = self._cuda(trainer)
            stats = gwt.memory_stats(own) if own is not None else {}
            self.last_metrics = self.metrics(trainer, stats)
            loggers = getattr(trainer, "loggers", None)
            if loggers is None:
                loggers = [trainer.logger] if getattr(trainer, "logger", None) else []
            for logger in loggers:
                logger.log_metrics(self.last_metrics, step=step)
            if self._reporter is not None:
                self._reporter.count(step)
                if own is not None:
                    self._reporter.memory(own, stats, gwt.SOCKET_KEYS, uuid=gwt.device_uuid(own))
                if trainer.is_global_zero:
                    self._reporter.mark("step", step)

        def on_train_epoch_end(self, trainer, pl_module):
            if self._reporter is not None and trainer.is_global_zero:
                self._reporter.mark("epoch", trainer.current_epoch)

        def on_train_end(self, trainer, pl_module):
            if self._reporter is not None:
                self._reporter.close()
                self._reporter = None
            if self._own_sampler and self._sampler is not None:
                self._sampler.close()
                self._sampler, self._own_sampler = None, False

    # Named as the module attribute it is, so pickle (ddp_spawn, multiprocessing) finds it.
    GpuWatchCallback.__qualname__ = "GpuWatchCallback"
    return GpuWatchCallback


def __getattr__(name):
    if name == "GpuWatchCallback":
        return _build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
