"""gpuwatch.torch: allocator numbers, the gap with nvidia-smi, step reporting, leaks, OOM reports.

Runs against Debian's CPU-only torch; CUDA's answers are injected where the logic needs them.
"""
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch  # Debian's python3-torch (CPU only), installed by scripts/install-deps.sh

import gpuwatch
from gpuwatch import _adapter
from gpuwatch import torch as gwt
from conftest import ScalarWriter

GiB = 2**30
MiB = 2**20


def test_importing_the_adapters_imports_no_framework():
    code = ("import sys, gpuwatch.torch, gpuwatch.lightning, gpuwatch.keras, gpuwatch.jax\n"
            "loaded = [m for m in ('torch', 'lightning', 'pytorch_lightning', 'tensorflow', "
            "'keras', 'jax') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_torch_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"gpuwatch.torch needs torch .*pip install torch"):
        gwt.memory_stats()
    with pytest.raises(ImportError, match="pip install torch"):
        gwt.TorchMonitor()


def test_memory_stats_keeps_the_known_counters_and_skips_what_a_version_lacks():
    full = {"allocated_bytes.all.current": 3 * GiB, "allocated_bytes.all.peak": 5 * GiB,
            "reserved_bytes.all.current": 4 * GiB, "reserved_bytes.all.peak": 6 * GiB,
            "active_bytes.all.current": 3 * GiB + 1, "active_bytes.all.peak": 5 * GiB + 1,
            "inactive_split_bytes.all.current": 2, "inactive_split_bytes.all.peak": GiB,
            "num_ooms": 1, "num_alloc_retries": 2, "allocation.all.current": 7}
    assert gwt.parse_memory_stats(full) == {
        "allocated": 3 * GiB, "peak_allocated": 5 * GiB, "reserved": 4 * GiB,
        "peak_reserved": 6 * GiB, "active": 3 * GiB + 1, "peak_active": 5 * GiB + 1,
        "inactive_split": 2, "peak_inactive_split": GiB, "num_ooms": 1, "num_alloc_retries": 2}
    old = {"allocated_bytes.all.current": 10, "reserved_bytes.all.current": 20}
    assert gwt.parse_memory_stats(old) == {"allocated": 10, "reserved": 20}
    assert gwt.parse_memory_stats({}) == {}, "torch answers {} before CUDA's first use"


# Debian's torch (CI) has no CUDA; on the GPU machine tests/gpu/python_torch.py checks the
# same calls against a real allocator.
cpu_torch_only = pytest.mark.skipif(torch.cuda.is_available(),
                                    reason="a CUDA torch: tests/gpu/python_torch.py covers it")


@cpu_torch_only
def test_memory_stats_on_a_cpu_only_torch_says_there_is_no_cuda_device():
    with pytest.raises(gpuwatch.Unavailable, match="no CUDA device"):
        gwt.memory_stats()


def test_the_gap_splits_nvidia_smi_into_allocator_cache_and_context():
    e = gwt.explain_gap(process_used=6 * GiB, reserved=4 * GiB, allocated=3 * GiB, device=1, gpu=5)
    assert e.context_and_libraries == 2 * GiB
    assert e.allocator_cache == 1 * GiB
    assert (e.device, e.gpu, e.process_used) == (1, 5, 6 * GiB)
    assert str(e) == e.text
    lines = e.text.splitlines()
    assert lines[0] == ("CUDA device 1 (GPU 5 for nvidia-smi): this process uses 6.00 GiB "
                        "(NVML, what nvidia-smi shows)")
    assert "4.00 GiB  reserved by torch's caching allocator" in lines[1]
    assert "3.00 GiB  in live tensors" in lines[2]
    assert "1.00 GiB  cached by the allocator" in lines[3]
    assert "2.00 GiB  outside torch's allocator: the CUDA context" in lines[4]


def test_the_gap_without_nvml_figures_or_with_a_stale_one_says_so():
    e = gwt.explain_gap(None, reserved=GiB, allocated=GiB // 2)
    assert e.context_and_libraries is None and e.allocator_cache == GiB // 2
    assert "NVML lists no memory for this process" in e.text
    stale = gwt.explain_gap(GiB, reserved=2 * GiB, allocated=GiB)
    assert stale.context_and_libraries == -GiB
    assert "1.00 GiB below torch's reserved" in stale.text


def test_a_cuda_device_is_found_by_uuid_pci_or_visible_devices():
    devices = gpuwatch.snapshot(demo=True)["devices"]
    gpu3 = devices[3]["fields"]
    plain_uuid = gpu3["uuid"][len("GPU-"):]  # torch prints UUIDs without the prefix
    assert _adapter.find_device(devices, 0, uuid=plain_uuid)["index"] == 3
    domain, bus, dev = _adapter.parse_pci(gpu3["pci_bus_id"])
    assert _adapter.find_device(devices, 0, pci=(domain, bus, dev))["index"] == 3
    assert _adapter.find_device(devices, 1, visible="6,3")["index"] == 3
    assert _adapter.find_device(devices, 0, visible=gpu3["uuid"][:12])["index"] == 3
    assert _adapter.find_device(devices, 3)["index"] == 3
    assert _adapter.find_device(devices, 2, visible="6,3") is None
    assert _adapter.parse_pci("00000000:18:00.0") == (0, 0x18, 0)


def fake_cuda(monkeypatch, stats, props):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "memory_stats", lambda device=None: stats)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)


def test_explain_reads_this_process_on_the_gpu_torch_uses(monkeypatch):
    snap = gpuwatch.snapshot(demo=True)
    gpu2 = snap["devices"][2]
    gpu2["processes"].append({"pid": os.getpid(), "fields": {"used_memory_bytes": 7 * GiB}})
    fake_cuda(monkeypatch, {"allocated_bytes.all.current": 2 * GiB,
                            "reserved_bytes.all.current": 5 * GiB},
              SimpleNamespace(name="NVIDIA H200", uuid=gpu2["fields"]["uuid"][4:]))
    e = gwt.explain(snapshot=snap)
    assert (e.device, e.gpu, e.process_used) == (0, 2, 7 * GiB)
    assert (e.context_and_libraries, e.allocator_cache) == (2 * GiB, 3 * GiB)
    # an old torch without uuid or PCI: CUDA_VISIBLE_DEVICES and the index decide
    fake_cuda(monkeypatch, {}, SimpleNamespace(name="NVIDIA H200"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    assert gwt.explain(snapshot=lambda: snap).gpu == 2


def test_the_monitor_names_its_devices_uuid_so_gpuwatch_files_it_under_that_gpu(
        job_socket, monkeypatch):
    # torch's props.uuid prints without NVML's "GPU-" prefix; gpuwatch matches either.
    fake_cuda(monkeypatch, {}, SimpleNamespace(name="NVIDIA H200", uuid="8f0c1d2e-0000-1111"))
    monitor = gwt.TorchMonitor(every_n_steps=1, devices=[0], stats=lambda d: {"allocated": 7})
    monitor.step()
    monitor.close()
    lines = job_socket.wait_for(2)
    assert lines[1] == "mem framework=torch device=0 uuid=8f0c1d2e-0000-1111 allocated=7"
    assert gwt.device_uuid(0) == "8f0c1d2e-0000-1111"


def test_the_monitor_sends_memory_and_step_marks_over_the_job_socket(job_socket):
    writer = ScalarWriter()
    monitor = gwt.TorchMonitor(every_n_steps=2, devices=[0], writer=writer, stats=lambda d: {
        "allocated": 100 * monitor.reporter.step, "reserved": 4096, "active": 150,
        "peak_allocated": 900, "num_ooms": 0})
    for _ in range(5):
        monitor.step()
    monitor.close()
    version = torch.__version__.split("+")[0]
    assert job_socket.wait_for(5) == [
        f"hello framework=torch version={version} pid={os.getpid()}",
        "mem framework=torch device=0 allocated=200 reserved=4096 active=150 peak_allocated=900",
        "mark step=2",
        "mem framework=torch device=0 allocated=400 reserved=4096 active=150 peak_allocated=900",
        "mark step=4",
    ]
    assert [(r["step"], r["allocated"], r["num_ooms"]) for r in monitor.timeline] == [
        (2, 200, 0), (4, 400, 0)]
    assert ("gpuwatch/torch/device0/allocated", 400, 4) in writer.scalars


def test_the_monitor_sends_what_gpuwatch_sweep_needs_to_tell_the_cache_from_the_need(
        job_socket):
    stats = {"allocated": 10, "reserved": 40, "active": 11, "peak_allocated": 30,
             "peak_reserved": 50, "peak_inactive_split": 5, "inactive_split": 1,
             "peak_active": 31, "num_ooms": 0}
    monitor = gwt.TorchMonitor(every_n_steps=1, devices=[0], stats=lambda d: stats)
    monitor.step()
    monitor.close()
    assert job_socket.wait_for(3)[1] == (
        "mem framework=torch device=0 allocated=10 reserved=40 active=11 peak_allocated=30 "
        "peak_reserved=50 peak_inactive_split=5")


def test_without_gpuwatch_run_the_timeline_stays_bounded_in_process():
    monitor = gwt.TorchMonitor(every_n_steps=1, devices=[0], timeline=3,
                               stats=lambda d: {"allocated": monitor.reporter.step})
    assert monitor.reporter.socket is None
    for _ in range(10):
        monitor.step()
    assert [r["allocated"] for r in monitor.timeline] == [8, 9, 10]
    monitor.step(step=40)  # the caller's own step count
    assert monitor.timeline[-1]["step"] == 40
    with pytest.raises(ValueError, match="every_n_steps"):
        gwt.TorchMonitor(every_n_steps=0)


def test_the_monitor_writes_a_collectors_windows_to_the_writer():
    writer = ScalarWriter()
    with gpuwatch.Sampler(interval=0.05, demo=True) as sampler:
        collector = gpuwatch.Collector(sampler)
        monitor = gwt.TorchMonitor(every_n_steps=1, devices=[], writer=writer,
                                   collector=collector)
        with collector("train"):
            assert sampler.wait(timeout=5) is not None
            assert sampler.wait(timeout=5) is not None
            monitor.step()
    tags = {tag for tag, _, step in writer.scalars if step == 1}
    assert "gpuwatch/train/gpu0/memory_used_bytes/mean" in tags
    assert "gpuwatch/train/gpu7/utilization_gpu_ratio/max" in tags
    assert not any("clock_sm_hertz" in tag for tag in tags), "only COLLECTOR_FIELDS"


class Loop:
    """A training step's allocations: a sawtooth of activations, optionally a kept tensor."""

    def __init__(self, leak_bytes=0):
        self.calls = 0
        self.kept = 0
        self.leak_bytes = leak_bytes

    def step(self):
        self.calls += 1
        self.kept += self.leak_bytes

    def allocated(self):
        return 2 * GiB + (self.calls % 7) * 300 * MiB + self.kept


def test_leak_check_finds_a_planted_leak_on_a_sawtooth():
    loop = Loop(leak_bytes=MiB)
    verdict = gwt.leak_check(loop.step, iterations=100, warmup=5, measure=loop.allocated)
    assert verdict.leak, verdict.explanation
    assert verdict.bytes_per_iteration == pytest.approx(MiB, rel=0.2)
    assert verdict.iterations == 100 and loop.calls == 105


def test_leak_check_does_not_flag_a_sawtooth_without_growth():
    loop = Loop()
    synced = []
    verdict = gwt.leak_check(loop.step, iterations=100, measure=loop.allocated,
                             synchronize=lambda: synced.append(1))
    assert not verdict.leak, verdict.explanation
    assert len(synced) == 105


def test_leak_check_measures_after_the_warmup_and_needs_16_iterations():
    loop = Loop()
    measured = []

    def measure():
        measured.append(loop.calls)
        return loop.allocated()

    assert gwt.leak_check(loop.step, iterations=20, warmup=3, measure=measure).iterations == 20
    assert measured == list(range(4, 24)), "after each call but the 3 of the warmup"
    with pytest.raises(gpuwatch.InvalidArgument, match="16"):
        gwt.leak_check(loop.step, iterations=10, measure=loop.allocated)


@cpu_torch_only
def test_leak_check_measures_torch_allocated_bytes_by_default():
    with pytest.raises(gpuwatch.Unavailable, match="no CUDA device"):
        gwt.leak_check(lambda: None)  # CPU-only torch: no allocator to measure


def test_an_oom_writes_the_timeline_and_who_held_what_then_reraises(tmp_path, capsys):
    monitor = gwt.TorchMonitor(every_n_steps=1, devices=[0], stats=lambda d: {"allocated": 42})
    monitor.step()
    path = tmp_path / "oom.json"
    with pytest.raises(torch.cuda.OutOfMemoryError):
        with gwt.oom_report(path=str(path), monitor=monitor,
                            snapshot=lambda: gpuwatch.snapshot(demo=True)) as report:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert report.written == str(path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "gpuwatch.oom/1" and doc["pid"] == os.getpid()
    assert "Tried to allocate 2.00 GiB" in doc["error"]
    assert [r["allocated"] for r in doc["timeline"]] == [42]
    assert len(doc["snapshot"]["devices"]) == 8
    if torch.cuda.is_available():
        assert "0" in doc["memory_stats"], "every CUDA device, by ordinal"
    else:
        assert "no CUDA device" in doc["memory_stats"]["error"], "CPU torch: said, not fatal"
    assert capsys.readouterr().err.strip().endswith(str(path))


def test_an_old_torchs_oom_runtime_error_is_reported_as_a_decorator(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @gwt.oom_report(snapshot={"devices": []})
    def train():
        raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB")

    with pytest.raises(RuntimeError, match="out of memory"):
        train()
    doc = json.loads((tmp_path / f"gpuwatch-oom-{os.getpid()}.json").read_text())
    assert doc["snapshot"] == {"devices": []} and doc["timeline"] == []


def test_other_errors_and_clean_exits_write_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        with gwt.oom_report(snapshot={}):
            raise ValueError("not memory")
    with gwt.oom_report(snapshot={}):
        pass
    assert list(tmp_path.iterdir()) == []
