"""The module over the C++ core: one reading, errors as exceptions, select, leak verdicts,
the command line, the job socket."""
import os
import socket
import subprocess
import sys
import threading

import pytest

import gpuwatch
from conftest import scenario


def test_snapshot_of_the_demo_fleet_has_every_gpu_and_its_processes():
    snap = gpuwatch.snapshot(demo=True)
    assert snap["schema"] == "gpuwatch.snapshot/1"
    assert snap["demo"] is True
    assert len(snap["devices"]) == 8
    gpu0 = snap["devices"][0]
    assert gpu0["fields"]["memory_total_bytes"] > 0
    assert gpu0["processes"], "the demo's GPU 0 runs a training job"
    assert any(d["mig_devices"] for d in snap["devices"]), "GPU 5 is in MIG mode"


def test_a_lost_gpu_is_reported_while_the_others_read(monkeypatch):
    monkeypatch.setenv("GPUWATCH_FAKE_TIME", "15")
    snap = gpuwatch.snapshot(scenario=scenario("lost.yaml"))
    health = [d["health"] for d in snap["devices"]]
    assert health == ["ok", "lost", "ok"]
    assert snap["devices"][2]["fields"]["utilization_gpu_ratio"] == pytest.approx(0.7)


def test_errors_arrive_as_gpuwatch_exceptions_naming_the_problem(tmp_path, capfd):
    bad = tmp_path / "bad.yaml"
    bad.write_text("devices: [ {name: \n")
    with pytest.raises(gpuwatch.Unavailable, match="NVML failed to initialize"):
        gpuwatch.snapshot(scenario=str(bad))
    assert "bad.yaml" in capfd.readouterr().err, "the fake NVML names the file it cannot read"
    with pytest.raises(gpuwatch.InvalidArgument, match="10 ms"):
        gpuwatch.Sampler(interval=0.001, demo=True)
    for absurd in (float("nan"), float("inf"), 1e300, -1.0):
        with pytest.raises(gpuwatch.InvalidArgument, match="interval_s"):
            gpuwatch.Sampler(interval=absurd, demo=True)
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError too
        gpuwatch.select(0, demo=True)
    with pytest.raises(gpuwatch.NotFound):
        gpuwatch.snapshot(replay=str(tmp_path / "missing.jsonl"))


def test_without_a_driver_the_error_says_what_to_try(monkeypatch):
    monkeypatch.setenv("GPUWATCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    with pytest.raises(gpuwatch.Unavailable) as e:
        gpuwatch.snapshot()
    assert "/nonexistent/libnvidia-ml.so.1" in str(e.value)
    assert "--demo" in str(e.value)


def test_select_chooses_the_least_busy_and_explains_refusals(monkeypatch):
    monkeypatch.setenv("GPUWATCH_FAKE_TIME", "100")  # the demo fleet, frozen
    two = gpuwatch.select(2, demo=True)
    assert [g.id for g in two] == ["7", "4"]
    assert all(g.reasons == [] for g in two)
    with pytest.raises(gpuwatch.NotEnoughGpus) as e:
        gpuwatch.select(4, demo=True, min_free="60GiB", max_util=50)
    assert "GPU 0: 51.1 GiB free < 60.0 GiB" in str(e.value)
    assert len(e.value.candidates) == 10  # 8 GPUs and GPU 5's two MIG devices
    mig = [g for g in e.value.candidates if g.mig_index is not None]
    assert mig[0].cuda_name.startswith("MIG-")
    with pytest.raises(gpuwatch.InvalidArgument, match="max_util=130"):
        gpuwatch.select(demo=True, max_util=130)
    with pytest.raises(gpuwatch.InvalidArgument, match="min_free='lots'"):
        gpuwatch.select(demo=True, min_free="lots")


def test_select_counts_leased_gpus_as_taken(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUWATCH_FAKE_TIME", "100")
    gw = os.path.join(os.path.dirname(gpuwatch.__file__), "_data", "gpuwatch")
    holder = subprocess.Popen(["sleep", "60"])
    try:
        subprocess.run([gw, "--demo", "select", "--lease", "--lease-owner", str(holder.pid)],
                       check=True, capture_output=True)
        chosen = gpuwatch.select(1, demo=True)
        assert chosen[0].id != "7", "7, the least busy, is leased"
    finally:
        holder.kill()
        holder.wait()
    assert gpuwatch.select(1, demo=True)[0].id == "7", "the holder died: 7 is back"


def test_select_reads_only_what_choosing_needs(tmp_path):
    """Every call choosing does not need hangs for 60 s: the choice still comes at once."""
    path = tmp_path / "hangs.yaml"
    path.write_text("devices:\n  - {name: NVIDIA H200}\n  - {name: NVIDIA L40S}\nfaults:\n" +
                    "".join(f"  - hang: {{call: {c}, ms: 60000}}\n" for c in (
                        "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature",
                        "nvmlDeviceGetClockInfo", "nvmlDeviceGetPcieThroughput",
                        "nvmlDeviceGetComputeRunningProcesses_v3")))
    code = ("import gpuwatch; print(','.join(g.id for g in "
            f"gpuwatch.select(2, scenario={str(path)!r}, order='index')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0,1\n"


def test_check_leak_sees_through_a_sawtooth():
    steady = [1e9 + (i % 10) * 50e6 for i in range(200)]
    leaking = [1e9 + (i % 10) * 50e6 + i * 1_048_576 for i in range(200)]
    assert not gpuwatch.check_leak(steady)
    verdict = gpuwatch.check_leak(leaking)
    assert verdict.leak
    assert verdict.bytes_per_iteration == pytest.approx(1_048_576, rel=0.05)
    assert "per iteration" in verdict.explanation
    with pytest.raises(gpuwatch.InvalidArgument, match="at least 16"):
        gpuwatch.check_leak([1.0] * 5)


def test_python_dash_m_gpuwatch_runs_the_command_line(monkeypatch):
    monkeypatch.setenv("GPUWATCH_FAKE_TIME", "100")  # the demo fleet, frozen
    out = subprocess.run([sys.executable, "-m", "gpuwatch", "--demo", "select", "-n", "2"],
                         capture_output=True, text=True, check=True)
    assert out.stdout == "7,4\n"
    bad = subprocess.run([sys.executable, "-m", "gpuwatch", "--demo", "select", "--count", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert "--count 0" in bad.stderr
    # Commands other than status, query and select are gpuwatch-full's, packaged beside it.
    script = subprocess.run([sys.executable, "-m", "gpuwatch", "completion", "bash"],
                            capture_output=True, text=True, check=True)
    assert "complete -F" in script.stdout
    # top is gpuwatch-top's, packaged beside it too: without a terminal it says what it needs.
    data = os.path.join(os.path.dirname(gpuwatch.__file__), "_data")
    assert os.access(os.path.join(data, "gpuwatch-top"), os.X_OK)
    top = subprocess.run([sys.executable, "-m", "gpuwatch", "--demo", "top"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert top.returncode == 2
    assert "top needs a full-screen terminal" in top.stderr


def test_the_job_socket_sends_the_protocol_lines(tmp_path, monkeypatch):
    path = str(tmp_path / "job.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    received = []

    def accept():
        conn, _ = server.accept()
        with conn:
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
        received.append(data.decode())

    t = threading.Thread(target=accept)
    t.start()
    monkeypatch.setenv("GPUWATCH_SOCKET", path)
    job = gpuwatch.JobSocket.from_env()
    assert job is not None and job.connected
    job.hello("torch", "2.11.0+cu130")
    job.memory("torch", 0, {"allocated": 1024, "reserved": 2048.0})
    job.mark("step", 12)
    job.mark("phase", "eval run")
    job.close()
    t.join(5)
    server.close()
    assert received[0].splitlines() == [
        f"hello framework=torch version=2.11.0_cu130 pid={os.getpid()}",
        "mem framework=torch device=0 allocated=1024 reserved=2048",
        "mark step=12",
        "mark phase=eval_run",
    ]
    monkeypatch.setenv("GPUWATCH_SOCKET", str(tmp_path / "nobody-listens"))
    assert gpuwatch.JobSocket.from_env() is None, "no gpuwatch run: nothing to report to"


def test_the_module_holds_the_engine_and_no_command_line_code():
    """The module binds the embedding API on the engine (src/engine): none of src/cli or CLI11
    is linked in (issue 14)."""
    module = gpuwatch._core.__file__
    symbols = subprocess.run(["nm", "-C", module], capture_output=True, text=True, check=True).stdout
    assert "gpuwatch::engine::OpenSource" in symbols, "the module's symbols are readable"
    assert "gpuwatch::engine::Pipeline" in symbols
    linked = [line for line in symbols.splitlines() if "gpuwatch::cli::" in line or " CLI::" in line]
    assert linked == [], linked[:5]
