"""gpuwatch.lightning: the callback against a stub lightning.pytorch and a fake trainer.

Lightning is not packaged for Debian, so its Callback base is a stub here; torch is Debian's
CPU build with CUDA's answers injected; NVML is the demo fleet. The real thing runs in
tests/gpu/python_lightning.py.
"""
import os
import pickle
import sys
import types
from types import SimpleNamespace

import pytest
import torch

import gpuwatch
from gpuwatch import lightning as gwl

class Logger:
    def __init__(self):
        self.rows = []

    def log_metrics(self, metrics, step):
        self.rows.append((step, dict(metrics)))


def stub(monkeypatch, name="lightning.pytorch"):
    pl = types.ModuleType(name)
    pl.Callback = type("Callback", (), {})
    if name == "lightning.pytorch":
        monkeypatch.setitem(sys.modules, "lightning", types.ModuleType("lightning"))
    monkeypatch.setitem(sys.modules, name, pl)
    gwl._build.cache_clear()
    return pl


@pytest.fixture(autouse=True)
def fresh_class():
    gwl._build.cache_clear()
    yield
    gwl._build.cache_clear()


def fake_cuda(monkeypatch, snapshot, nvml_of):
    """CUDA device i is the demo's GPU nvml_of[i]; torch's allocator holds fixed numbers."""
    uuids = {i: snapshot["devices"][n]["fields"]["uuid"] for i, n in nvml_of.items()}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "memory_stats", lambda device=None: {
        "allocated_bytes.all.current": 1000 + device, "reserved_bytes.all.current": 5000,
        "active_bytes.all.current": 1500, "allocated_bytes.all.peak": 3000})
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda i: SimpleNamespace(uuid=uuids[i][len("GPU-"):]))


def trainer(devices=(0, 1), root=0, loggers=None):
    device = torch.device("cuda", root) if devices else torch.device("cpu")
    return SimpleNamespace(strategy=SimpleNamespace(root_device=device), device_ids=list(devices),
                           global_step=0, current_epoch=0, is_global_zero=True,
                           loggers=[Logger()] if loggers is None else loggers)


def test_without_lightning_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightning", None)
    monkeypatch.setitem(sys.modules, "pytorch_lightning", None)
    with pytest.raises(ImportError, match=r"lightning.pytorch or pytorch_lightning.*"
                                          r"pip install lightning"):
        gwl.GpuWatchCallback
    with pytest.raises(AttributeError):
        gwl.NoSuchThing


def test_the_callback_subclasses_lightning_or_the_older_pytorch_lightning(monkeypatch):
    pl = stub(monkeypatch)
    assert issubclass(gwl.GpuWatchCallback, pl.Callback)
    assert gwl.GpuWatchCallback is gwl.GpuWatchCallback, "built once"
    monkeypatch.setitem(sys.modules, "lightning", None)
    monkeypatch.setitem(sys.modules, "lightning.pytorch", None)
    old = stub(monkeypatch, "pytorch_lightning")
    assert issubclass(gwl.GpuWatchCallback, old.Callback)


def test_the_callback_pickles_for_spawned_ranks(monkeypatch):
    stub(monkeypatch)
    cb = gwl.GpuWatchCallback(every_n_steps=7)
    copy = pickle.loads(pickle.dumps(cb))
    assert type(copy) is gwl.GpuWatchCallback and copy.every_n_steps == 7


def test_gpu_metrics_name_each_trainer_gpu_and_this_process():
    snap = gpuwatch.snapshot(demo=True)
    gpu4 = snap["devices"][4]
    gpu4["processes"].append({"pid": os.getpid(), "fields": {"used_memory_bytes": 123}})
    got = gwl.gpu_metrics(snap, {0: gpu4, 1: None}, own=0, pid=os.getpid(), prefix="gw/")
    assert got == {"gw/gpu0/memory_used_bytes": gpu4["fields"]["memory_used_bytes"],
                   "gw/gpu0/memory_total_bytes": gpu4["fields"]["memory_total_bytes"],
                   "gw/gpu0/utilization_gpu_ratio": gpu4["fields"]["utilization_gpu_ratio"],
                   "gw/gpu0/process_used_bytes": 123}
    assert gwl.gpu_metrics(None, {0: gpu4}, 0, os.getpid()) == {}


def test_every_n_steps_the_loggers_get_gpu_and_allocator_metrics(monkeypatch, job_socket):
    stub(monkeypatch)
    with gpuwatch.Sampler(interval=60, demo=True) as sampler:
        snap = sampler.wait(timeout=10)
        fake_cuda(monkeypatch, snap, {0: 4, 1: 6})
        t = trainer()
        cb = gwl.GpuWatchCallback(every_n_steps=2, sampler=sampler)
        cb.on_train_start(t, None)
        for step in (1, 2, 2, 3, 4):  # step 2 twice: gradient accumulation
            t.global_step = step
            cb.on_train_batch_end(t, None, {"loss": 1.0}, None, step)
        cb.on_train_epoch_end(t, None)
        cb.on_train_end(t, None)
    rows = t.loggers[0].rows
    assert [step for step, _ in rows] == [2, 4]
    metrics = rows[-1][1]
    assert metrics["gpuwatch/gpu0/memory_used_bytes"] == snap["devices"][4]["fields"][
        "memory_used_bytes"], "CUDA 0 is NVML's GPU 4 by UUID"
    assert metrics["gpuwatch/gpu1/utilization_gpu_ratio"] == snap["devices"][6]["fields"][
        "utilization_gpu_ratio"]
    assert metrics["gpuwatch/torch/allocated"] == 1000
    assert metrics["gpuwatch/torch/reserved"] == 5000
    version = torch.__version__.split("+")[0]
    # the UUID names NVML's GPU 4 for gpuwatch run, whatever CUDA calls it
    uuid = snap["devices"][4]["fields"]["uuid"][len("GPU-"):]
    mem = (f"mem framework=torch device=0 uuid={uuid} allocated=1000 reserved=5000 active=1500 "
           "peak_allocated=3000")
    assert job_socket.wait_for(6) == [
        f"hello framework=torch version={version} pid={os.getpid()}",
        mem, "mark step=2", mem, "mark step=4", "mark epoch=0"]
    assert cb._sampler is sampler, "a sampler it was given stays open"


def test_off_cuda_it_logs_nothing_of_gpus_and_other_ranks_do_not_mark(monkeypatch, job_socket):
    stub(monkeypatch)
    with gpuwatch.Sampler(interval=60, demo=True) as sampler:
        sampler.wait(timeout=10)
        t = trainer(devices=())
        cb = gwl.GpuWatchCallback(every_n_steps=1, sampler=sampler)
        cb.on_train_start(t, None)
        t.global_step = 1
        cb.on_train_batch_end(t, None, None, None, 0)
        t.is_global_zero = False
        t.global_step = 2
        cb.on_train_batch_end(t, None, None, None, 1)
        cb.on_train_end(t, None)
    assert t.loggers[0].rows == [(1, {}), (2, {})]
    assert job_socket.wait_for(2)[1:] == ["mark step=1"]


def test_without_a_driver_it_warns_and_logs_torchs_numbers_only(monkeypatch):
    stub(monkeypatch)
    monkeypatch.setenv("GPUWATCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    fake_cuda(monkeypatch, gpuwatch.snapshot(demo=True), {0: 0})
    t = trainer(devices=(0,))
    cb = gwl.GpuWatchCallback(every_n_steps=1)
    with pytest.warns(UserWarning, match=r"(?s)no NVML readings.*nonexistent"):
        cb.on_train_start(t, None)
    t.global_step = 1
    cb.on_train_batch_end(t, None, None, None, 0)
    cb.on_train_end(t, None)
    assert t.loggers[0].rows == [(1, {"gpuwatch/torch/allocated": 1000,
                                      "gpuwatch/torch/peak_allocated": 3000,
                                      "gpuwatch/torch/reserved": 5000,
                                      "gpuwatch/torch/active": 1500})]
    with pytest.raises(ValueError, match="every_n_steps"):
        gwl.GpuWatchCallback(every_n_steps=0)


def test_its_own_sampler_runs_during_training_and_closes_after(monkeypatch):
    stub(monkeypatch)
    created = []

    class Recording(gpuwatch.Sampler):
        def __init__(self, interval):
            super().__init__(interval=interval, demo=True)
            created.append(self)

    monkeypatch.setattr("gpuwatch.sampling.Sampler", Recording)
    gwl._build.cache_clear()
    t = trainer(devices=())
    cb = gwl.GpuWatchCallback(every_n_steps=1, interval=0.05)
    cb.on_train_start(t, None)
    assert len(created) == 1 and created[0].wait(timeout=10) is not None
    cb.on_train_end(t, None)
    assert cb._sampler is None
    with pytest.raises(gpuwatch.Unavailable):
        created[0].latest()
