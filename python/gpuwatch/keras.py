"""Keras / TensorFlow: GpuWatchCallback puts TensorFlow's GPU memory into model.fit's logs.

    from gpuwatch.keras import GpuWatchCallback
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)   # else TF takes ~all memory
    model.fit(x, y, callbacks=[GpuWatchCallback(every_n_steps=50)])

Every N batches: tf.config.experimental.get_memory_info('GPU:N') (current and peak bytes)
into ``logs`` as gpuwatch_gpuN_allocated_bytes / _peak_allocated_bytes, to a TensorBoard
writer when given, and over GPUWATCH_SOCKET under `gpuwatch run` with step and epoch
marks. It warns once when memory growth is off. TensorFlow is imported when
GpuWatchCallback is first used, not with this module.
"""
import functools
import importlib
import os
import warnings
from typing import Dict, List

from . import _adapter
from ._errors import InvalidArgument


def _tf():
    return _adapter.require("tensorflow", "keras", "tf.config.experimental.get_memory_info, "
                            "TensorFlow's GPU memory counters", "pip install tensorflow")


def _callback_base(tf):
    legacy = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true")
    try:  # Keras 3, or Keras 2 beside TensorFlow; tf.keras is tf_keras under TF_USE_LEGACY_KERAS
        if not legacy:
            return importlib.import_module("keras").callbacks.Callback
    except (ImportError, AttributeError):
        pass
    keras = getattr(tf, "keras", None)
    return getattr(getattr(keras, "callbacks", None), "Callback", object)


def memory_info(tf, name: str) -> Dict[str, int]:
    """allocated (and peak_allocated) bytes of TensorFlow's allocator on device ``name``."""
    exp = tf.config.experimental
    if hasattr(exp, "get_memory_info"):  # TF >= 2.5
        info = exp.get_memory_info(name)
        out = {"allocated": info.get("current"), "peak_allocated": info.get("peak")}
    elif hasattr(exp, "get_memory_usage"):  # TF 2.4
        out = {"allocated": exp.get_memory_usage(name)}
    else:
        out = {}
    return {k: int(v) for k, v in out.items() if v is not None}


def growth_off(tf) -> List[str]:
    """The physical GPUs on which TensorFlow reserves nearly all memory at start."""
    if os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").lower() == "true":
        return []
    off = []
    for gpu in tf.config.list_physical_devices("GPU"):
        try:
            if not tf.config.experimental.get_memory_growth(gpu):
                off.append(getattr(gpu, "name", str(gpu)))
        except (ValueError, RuntimeError):  # virtual devices configured instead
            pass
    return off


class _SummaryWriter:
    """tf.summary's file writer behind add_scalar(tag, value, step)."""

    def __init__(self, tf, writer):
        self._tf, self._writer = tf, writer

    def add_scalar(self, tag, value, step):
        with self._writer.as_default():
            self._tf.summary.scalar(tag, value, step=step)


@functools.lru_cache(maxsize=None)
def _build():
    tf = _tf()

    class GpuWatchCallback(_callback_base(tf)):
        """TensorFlow's GPU memory every ``every_n_steps`` batches, into logs and a writer.

        ``writer``: a tf.summary file writer, or anything with add_scalar(tag, value, step).
        """

        def __init__(self, every_n_steps: int = 50, writer=None, warn_memory_growth: bool = True,
                     prefix: str = "gpuwatch_"):
            super().__init__()
            if every_n_steps < 1:
                raise InvalidArgument(f"every_n_steps={every_n_steps}: expected 1 or more")
            self.every_n_steps = every_n_steps
            self.writer = writer
            self.warn_memory_growth = warn_memory_growth
            self.prefix = prefix
            self._warned = False
            self._gpus: List[str] = []
            self._reporter = None
            self._steps = 0  # batches seen by earlier fit() calls

        def on_train_begin(self, logs=None):
            self._gpus = [f"GPU:{i}" for i in range(len(tf.config.list_physical_devices("GPU")))]
            off = growth_off(tf) if self.warn_memory_growth and not self._warned else []
            if off:
                self._warned = True
                warnings.warn(
                    f"gpuwatch: memory growth is off for {', '.join(off)}: TensorFlow reserves "
                    "nearly all of the GPU's memory at start, so nvidia-smi shows it full "
                    "whatever the model needs. Call tf.config.experimental.set_memory_growth(gpu,"
                    " True) for each GPU before TensorFlow uses it, or set "
                    "TF_FORCE_GPU_ALLOW_GROWTH=true.", UserWarning, stacklevel=2)
            writer = self.writer
            if writer is not None and not hasattr(writer, "add_scalar"):
                writer = _SummaryWriter(tf, writer)
            if self._reporter is None:
                self._reporter = _adapter.Reporter("tensorflow", tf.__version__,
                                                   self.every_n_steps, writer)
                self._reporter.step = self._steps

        def record(self) -> Dict[str, int]:
            """Reads every GPU's counters now and reports them; returns them as logged."""
            out = {}
            for i, name in enumerate(self._gpus):
                info = memory_info(tf, name)
                self._reporter.memory(i, info)
                out.update({f"{self.prefix}gpu{i}_{k}_bytes": v for k, v in info.items()})
            return out

        def on_train_batch_end(self, batch, logs=None):
            if self._reporter is None:
                self.on_train_begin()
            if self._reporter.count():
                metrics = self.record()
                self._reporter.mark("step", self._reporter.step)
                if logs is not None:
                    logs.update(metrics)

        def on_epoch_end(self, epoch, logs=None):
            if self._reporter is None:
                self.on_train_begin()
            metrics = self.record()
            if logs is not None:
                logs.update(metrics)
            self._reporter.mark("epoch", epoch)

        def on_train_end(self, logs=None):
            if self._reporter is not None:
                self._steps = self._reporter.step
                self._reporter.close()
                self._reporter = None

    # Named as the module attribute it is, so pickle (ddp_spawn, multiprocessing) finds it.
    GpuWatchCallback.__qualname__ = "GpuWatchCallback"
    return GpuWatchCallback


def __getattr__(name):
    if name == "GpuWatchCallback":
        return _build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
