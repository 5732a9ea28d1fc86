"""gpuwatch.jax: XLA's allocator numbers, pre-allocation explained, steps to gpuwatch run.

JAX is not packaged for Debian: `jax` is a stub module whose devices answer memory_stats()
as XLA's GPU client does (None on CPU). The real thing runs in tests/gpu/python_jax.py.
"""
import os
import sys
import types

import pytest

import gpuwatch
from gpuwatch import jax as gwj

GiB = 2**30
MiB = 2**20


class Device:
    def __init__(self, index, platform="gpu", stats=None):
        self.id = index
        self.local_hardware_id = index if platform == "gpu" else None
        self.platform = platform
        self.stats = stats

    def memory_stats(self):
        return None if self.stats is None else dict(self.stats)


def gpu_stats(in_use):
    return {"bytes_in_use": in_use, "peak_bytes_in_use": 2 * in_use, "bytes_limit": 105 * GiB,
            "pool_bytes": 105 * GiB, "num_allocs": 7, "largest_alloc_size": MiB}


@pytest.fixture
def jax(monkeypatch):
    module = types.ModuleType("jax")
    module.__version__ = "0.4.30"
    module.devices_ = [Device(0, stats=gpu_stats(12 * MiB)), Device(1, stats=gpu_stats(MiB)),
                       Device(7, platform="cpu")]
    module.local_devices = lambda: list(module.devices_)
    monkeypatch.setitem(sys.modules, "jax", module)
    return module


def test_without_jax_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(ImportError, match=r"gpuwatch.jax needs jax .*pip install 'jax\[cuda12\]'"):
        gwj.memory_stats()


def test_memory_stats_keeps_xlas_counters_and_tolerates_none(jax):
    assert gwj.memory_stats() == gpu_stats(12 * MiB)
    assert gwj.memory_stats(1)["bytes_in_use"] == MiB
    assert gwj.memory_stats(jax.devices_[2]) == {}, "a CPU device has no memory_stats()"
    assert gwj.parse_memory_stats(None) == {}
    assert gwj.parse_memory_stats({"bytes_in_use": 5, "bytes_limit": None, "other": 1}) == {
        "bytes_in_use": 5}


def test_default_environment_preallocates_three_quarters():
    p = gwj.detect_preallocation({}, total_bytes=140 * GiB,
                                 process_used_bytes=105 * GiB + 400 * MiB,
                                 bytes_in_use=12 * MiB, bytes_limit=105 * GiB)
    assert p and p.preallocate and p.fraction == 0.75 and p.allocator == "default"
    assert p.observed_fraction == pytest.approx(0.753, abs=0.001)
    assert p.text.startswith("JAX pre-allocates 75% of the GPU's memory at its first operation")
    assert "This process holds 105.39 GiB of 140.00 GiB (75%) by NVML; its arrays take 0.01 GiB" \
        in p.text
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in p.text and str(p) == p.text


def test_the_environment_turns_preallocation_off_or_changes_the_fraction():
    off = gwj.detect_preallocation({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    assert not off and off.text.startswith("JAX allocates on demand "
                                           "(XLA_PYTHON_CLIENT_PREALLOCATE=false)")
    platform = gwj.detect_preallocation({"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"})
    assert not platform and "XLA_PYTHON_CLIENT_ALLOCATOR=platform" in platform.text
    assert gwj.detect_preallocation({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}).preallocate
    both = {"XLA_CLIENT_MEM_FRACTION": ".3", "XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}
    assert gwj.detect_preallocation(both).fraction == 0.3, "the new name wins"
    assert gwj.detect_preallocation({"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}).fraction == 0.5
    for bad in ("abc", "1.5", "0"):
        assert gwj.detect_preallocation({"XLA_CLIENT_MEM_FRACTION": bad}).fraction == 0.75
    unknown = gwj.detect_preallocation({})
    assert unknown.observed_fraction is None and "This process holds" not in unknown.text


def test_preallocation_compares_jax_with_nvml_for_this_process(jax, monkeypatch):
    snap = gpuwatch.snapshot(demo=True)
    gpu3 = snap["devices"][3]
    total = gpu3["fields"]["memory_total_bytes"]
    gpu3["processes"].append({"pid": os.getpid(), "fields": {"used_memory_bytes": total * 3 // 4}})
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    p = gwj.preallocation(snapshot=snap, env={})
    assert (p.total_bytes, p.process_used_bytes) == (total, total * 3 // 4)
    assert p.observed_fraction == pytest.approx(0.75, abs=0.001)
    assert (p.bytes_in_use, p.bytes_limit) == (12 * MiB, 105 * GiB)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    assert not gwj.preallocation(snapshot=lambda: snap), "os.environ by default"


def test_the_monitor_sends_each_gpus_memory_and_the_step(jax, job_socket):
    monitor = gwj.JaxMonitor(every_n_steps=3)
    for _ in range(4):
        monitor.step()
    jax.devices_[0].stats["bytes_in_use"] = 20 * MiB
    monitor.step(step=6)
    monitor.close()
    mem = ("mem framework=jax device={} allocated={} peak_allocated={} reserved=112742891520 "
           "limit=112742891520")
    first = [mem.format(0, 12 * MiB, 24 * MiB), mem.format(1, MiB, 2 * MiB)]
    assert job_socket.wait_for(7) == [
        f"hello framework=jax version=0.4.30 pid={os.getpid()}", *first, "mark step=3",
        mem.format(0, 20 * MiB, 24 * MiB), mem.format(1, MiB, 2 * MiB), "mark step=6"]
    assert [(r["step"], r["device"]) for r in monitor.timeline] == [(3, 0), (3, 1), (6, 0), (6, 1)]


def test_the_monitor_without_gpuwatch_run_keeps_a_timeline_of_the_devices_given(jax):
    monitor = gwj.JaxMonitor(every_n_steps=1, devices=[1], timeline=2)
    assert monitor.reporter.socket is None
    for _ in range(3):
        monitor.step()
    assert [(r["step"], r["device"], r["allocated"]) for r in monitor.timeline] == [
        (2, 1, MiB), (3, 1, MiB)]
