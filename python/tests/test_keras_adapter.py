"""gpuwatch.keras: the callback against the Keras callback protocol, with a stub TensorFlow.

TensorFlow is not installed here nor on the GPU machine: `tensorflow` and `keras` are stub
modules holding only what the adapter calls (tf.config's device list, memory info and
memory growth; tf.summary; keras.callbacks.Callback).
"""
import contextlib
import os
import pickle
import sys
import types
import warnings
from types import SimpleNamespace

import pytest

from gpuwatch import keras as gwk
from conftest import ScalarWriter

MiB = 2**20


class FakeTF:
    """tensorflow as the adapter sees it: two GPUs whose allocators grow 1 MiB per read."""

    def __init__(self, growth=(False, True), old=False):
        self.module = types.ModuleType("tensorflow")
        self.module.__version__ = "2.16.1"
        self.reads = 0
        self.growth = list(growth)
        self.summaries = []
        gpus = [SimpleNamespace(name=f"/physical_device:GPU:{i}", device_type="GPU")
                for i in range(len(growth))]
        exp = SimpleNamespace(get_memory_growth=lambda d: self.growth[gpus.index(d)])
        if old:
            exp.get_memory_usage = lambda name: self._read(name)["current"]
        else:
            exp.get_memory_info = self._read
        self.module.config = SimpleNamespace(
            list_physical_devices=lambda kind=None: list(gpus) if kind in (None, "GPU") else [],
            experimental=exp)
        self.module.summary = SimpleNamespace(
            scalar=lambda tag, value, step: self.summaries.append((tag, value, step)))

    def _read(self, name):
        assert name in ("GPU:0", "GPU:1"), name
        self.reads += 1
        return {"current": self.reads * MiB, "peak": 100 * MiB}


@pytest.fixture
def tf(monkeypatch):
    fake = FakeTF()
    install(monkeypatch, fake)
    return fake


def install(monkeypatch, fake, keras=True):
    monkeypatch.setitem(sys.modules, "tensorflow", fake.module)
    if keras:
        module = types.ModuleType("keras")
        module.callbacks = SimpleNamespace(Callback=type("Callback", (), {}))
        monkeypatch.setitem(sys.modules, "keras", module)
    else:
        monkeypatch.setitem(sys.modules, "keras", None)
    gwk._build.cache_clear()


@pytest.fixture(autouse=True)
def fresh_class(monkeypatch):
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    gwk._build.cache_clear()
    yield
    gwk._build.cache_clear()


def test_without_tensorflow_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(ImportError, match=r"gpuwatch.keras needs tensorflow .*"
                                          r"pip install tensorflow"):
        gwk.GpuWatchCallback


def test_the_callback_subclasses_keras_or_tf_keras(monkeypatch, tf):
    assert issubclass(gwk.GpuWatchCallback, sys.modules["keras"].callbacks.Callback)
    base = type("TfKerasCallback", (), {})
    tf.module.keras = SimpleNamespace(callbacks=SimpleNamespace(Callback=base))
    install(monkeypatch, tf, keras=False)
    assert issubclass(gwk.GpuWatchCallback, base)
    install(monkeypatch, tf)
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")  # tf.keras is tf_keras: its base, not Keras 3's
    gwk._build.cache_clear()
    assert issubclass(gwk.GpuWatchCallback, base)
    del tf.module.keras
    gwk._build.cache_clear()
    assert gwk.GpuWatchCallback.__mro__[1] is object, "the protocol alone, without Keras"


def test_fit_gets_memory_in_its_logs_every_n_batches_and_at_epoch_end(tf):
    writer = ScalarWriter()
    cb = gwk.GpuWatchCallback(every_n_steps=2, writer=writer, warn_memory_growth=False)
    cb.on_train_begin({})
    batches = []
    for batch in range(4):
        logs = {"loss": 0.5}
        cb.on_train_batch_end(batch, logs)
        batches.append(logs)
    assert batches[0] == {"loss": 0.5} and batches[2] == {"loss": 0.5}
    assert batches[1] == {"loss": 0.5, "gpuwatch_gpu0_allocated_bytes": 1 * MiB,
                          "gpuwatch_gpu0_peak_allocated_bytes": 100 * MiB,
                          "gpuwatch_gpu1_allocated_bytes": 2 * MiB,
                          "gpuwatch_gpu1_peak_allocated_bytes": 100 * MiB}
    assert batches[3]["gpuwatch_gpu1_allocated_bytes"] == 4 * MiB, "read afresh"
    epoch = {"loss": 0.4}
    cb.on_epoch_end(0, epoch)
    assert epoch["gpuwatch_gpu0_allocated_bytes"] == 5 * MiB
    cb.on_train_end({})
    assert ("gpuwatch/tensorflow/device1/allocated", 4 * MiB, 4) in writer.scalars


def test_the_callback_pickles(tf):
    copy = pickle.loads(pickle.dumps(gwk.GpuWatchCallback(every_n_steps=3)))
    assert type(copy) is gwk.GpuWatchCallback and copy.every_n_steps == 3


def test_memory_growth_off_is_warned_once(tf, recwarn):
    cb = gwk.GpuWatchCallback()
    cb.on_train_begin()
    cb.on_train_end()
    cb.on_train_begin()  # a second fit()
    found = [w for w in recwarn.list if "memory growth is off" in str(w.message)]
    assert len(found) == 1
    message = str(found[0].message)
    assert "/physical_device:GPU:0" in message and "GPU:1" not in message
    assert "set_memory_growth" in message and "TF_FORCE_GPU_ALLOW_GROWTH=true" in message


def test_no_warning_when_growth_is_on_or_forced(monkeypatch, tf):
    tf.growth = [True, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gwk.GpuWatchCallback().on_train_begin()
        tf.growth = [False, False]
        monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
        gwk.GpuWatchCallback().on_train_begin()


def test_steps_and_epochs_reach_gpuwatch_run_across_fits(tf, job_socket):
    cb = gwk.GpuWatchCallback(every_n_steps=2, warn_memory_growth=False)
    hello = f"hello framework=tensorflow version=2.16.1 pid={os.getpid()}"
    mem = "mem framework=tensorflow device={} allocated={} peak_allocated=104857600"
    for epoch in range(2):  # two fit() calls of one batch each: the step count goes on
        cb.on_train_begin()
        cb.on_train_batch_end(0, {})
        cb.on_epoch_end(epoch, None)
        cb.on_train_end()
        job_socket.wait_for(4)  # each fit has a connection of its own
    assert job_socket.wait_for(11) == [
        hello, mem.format(0, 1 * MiB), mem.format(1, 2 * MiB), "mark epoch=0",
        hello, mem.format(0, 3 * MiB), mem.format(1, 4 * MiB), "mark step=2",
        mem.format(0, 5 * MiB), mem.format(1, 6 * MiB), "mark epoch=1"]


def test_tensorflow_24_reports_the_current_bytes_it_has(monkeypatch):
    old = FakeTF(growth=(True,), old=True)
    install(monkeypatch, old)
    logs = {}
    cb = gwk.GpuWatchCallback(every_n_steps=1)
    cb.on_train_begin()
    cb.on_train_batch_end(0, logs)
    assert logs == {"gpuwatch_gpu0_allocated_bytes": MiB}


def test_a_tf_summary_writer_is_written_through_tf_summary(tf):
    entered = []

    class FileWriter:  # what tf.summary.create_file_writer returns: no add_scalar
        @contextlib.contextmanager
        def as_default(self):
            entered.append(1)
            yield

    cb = gwk.GpuWatchCallback(every_n_steps=1, writer=FileWriter(), warn_memory_growth=False)
    cb.on_train_begin()
    cb.on_train_batch_end(0, None)
    assert ("gpuwatch/tensorflow/device0/allocated", MiB, 1) in tf.summaries
    assert len(entered) == len(tf.summaries) == 4
