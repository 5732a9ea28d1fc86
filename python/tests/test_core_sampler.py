"""The C++ sampler from Python: snapshots, events delivered by a Python thread, and the
Collector's windows with nested tags."""
import threading
import time

import pytest

import gpuwatch
from conftest import scenario


def test_the_sampler_publishes_newer_snapshots():
    with gpuwatch.Sampler(interval=0.05, demo=True) as s:
        first = s.wait(timeout=5)
        second = s.wait(timeout=5)
        assert first is not None and second is not None
        assert second["time"] >= first["time"]
        assert s.latest() is not None
    with pytest.raises(gpuwatch.Unavailable, match="closed"):
        s.latest()


def test_events_reach_python_callbacks_from_a_python_thread():
    got = []
    threads = set()
    done = threading.Event()

    def on_event(e):
        threads.add(threading.current_thread().name)
        got.append(e)
        if any(x.source == "gpu_xid" for x in got):
            done.set()

    def broken(e):
        raise RuntimeError("a bug in one callback")

    with gpuwatch.Sampler(interval=0.05, scenario=scenario("xid.yaml")) as s:
        s.on_event(broken)
        s.on_event(on_event)
        assert done.wait(10), [e.source for e in got]
    xid = [e for e in got if e.source == "gpu_xid"][0]
    assert xid.kind == "alert_firing"
    assert xid.severity == "critical"
    assert xid.gpu == 0
    assert "79" in xid.message or "94" in xid.message
    assert threads == {"gpuwatch-events"}, "delivered by gpuwatch's Python thread"


def test_collector_windows_nest_and_hold_mean_min_max_last():
    with gpuwatch.Sampler(interval=0.05, scenario=scenario("xid.yaml")) as s:
        c = gpuwatch.Collector(s)
        s.wait(5)  # the next snapshot is newer than the windows
        with c("train"):
            s.wait(5)
            s.wait(5)
            with c("epoch"):
                for _ in range(4):
                    s.wait(5)
                inner = c.collect()
            outer = c.collect()
        assert c.collect() == {}, "every window closed"
    key = "train/epoch/gpu0/utilization_gpu_ratio"
    assert inner[key + "/count"] >= 3
    assert inner[key + "/min"] <= inner[key + "/mean"] <= inner[key + "/max"]
    assert 0.2 <= inner[key + "/min"] and inner[key + "/max"] <= 0.8
    assert outer["train/gpu0/utilization_gpu_ratio/count"] > inner[key + "/count"]
    assert "train/epoch/gpu0/utilization_gpu_ratio/mean" not in outer
    with pytest.raises(gpuwatch.InvalidArgument):
        with c("a/b"):
            pass


def test_collect_with_reset_starts_the_window_afresh():
    with gpuwatch.Collector(interval=0.05, demo=True) as c:
        with c("run"):
            c.sampler.wait(5)
            c.sampler.wait(5)
            before = c.collect(reset=True)
            after = c.collect()
    assert before["run/gpu0/memory_used_bytes/count"] >= 1
    assert after.get("run/gpu0/memory_used_bytes/count", 0) <= 1
