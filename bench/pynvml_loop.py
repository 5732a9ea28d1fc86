"""A pynvml loop making the NVML calls `gpuwatch serve -i 1s` makes, at the
same cadences (src/sampler: interval fields every second, the driver's power
and utilization sample buffers from the last timestamp seen every second, XID
events drained every second, the slow fields every 10 s, energy and PCIe
throughput every 5 s), for every GPU: the reference for the daemon's CPU in
bench/side_by_side.py (issue 17, item 3). Only the calls that succeed on
this driver are kept after the first round, as gpuwatch caches unsupported
fields. No attribution (/proc), analysis, history or HTTP: that is gpuwatch's
own work on top.

    python3 bench/pynvml_loop.py SECONDS
"""
import os
import sys
import time

import pynvml as n

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pynvml_bench  # noqa: E402


def interval_calls(h, seen):
    def buffer(kind):
        def read():
            try:
                _, samples = n.nvmlDeviceGetSamples(h, kind, seen[kind])
            except n.NVMLError_NotFound:
                return
            for s in samples:
                seen[kind] = max(seen[kind], s.timeStamp)
        return read

    def process_utilization():
        try:
            n.nvmlDeviceGetProcessUtilization(h, seen["proc"])
        except n.NVMLError_NotFound:
            pass
        seen["proc"] = int(time.time() * 1e6)

    # bench/pynvml_bench.py's one sample (the interval fields and both process
    # lists), then the sample buffers and per-process utilization since last seen.
    return pynvml_bench.calls(h) + [
        buffer(n.NVML_TOTAL_POWER_SAMPLES),
        buffer(n.NVML_GPU_UTILIZATION_SAMPLES),
        process_utilization,
    ]


def slow_calls(h):
    return [
        lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 0),
        lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 1),
        lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0),
        lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 1),
        lambda: n.nvmlDeviceGetCurrPcieLinkGeneration(h),
        lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h),
        lambda: n.nvmlDeviceGetPowerManagementLimit(h),
        lambda: n.nvmlDeviceGetEnforcedPowerLimit(h),
        lambda: n.nvmlDeviceGetRemappedRows(h),
    ]


def costly_calls(h):
    return [
        lambda: n.nvmlDeviceGetTotalEnergyConsumption(h),
        lambda: n.nvmlDeviceGetPcieThroughput(h, 0),
        lambda: n.nvmlDeviceGetPcieThroughput(h, 1),
    ]


def working(calls):
    """The calls that answer on this driver (gpuwatch caches the others)."""
    kept = []
    for c in calls:
        try:
            c()
            kept.append(c)
        except n.NVMLError:
            pass
    return kept


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    n.nvmlInit()
    handles = [n.nvmlDeviceGetHandleByIndex(i) for i in range(n.nvmlDeviceGetCount())]
    events = n.nvmlEventSetCreate()
    for h in handles:
        try:
            n.nvmlDeviceRegisterEvents(h, n.nvmlEventTypeXidCriticalError, events)
        except n.NVMLError:
            pass
    per_gpu = []
    for h in handles:
        seen = {n.NVML_TOTAL_POWER_SAMPLES: 0, n.NVML_GPU_UTILIZATION_SAMPLES: 0, "proc": 0}
        per_gpu.append((working(interval_calls(h, seen)), working(slow_calls(h)),
                        working(costly_calls(h))))
    start = time.monotonic()
    tick = 0
    while time.monotonic() - start < seconds:
        for interval, slow, costly in per_gpu:
            for c in interval:
                c()
            if tick % 10 == 0:
                for c in slow:
                    c()
            if tick % 5 == 0:
                for c in costly:
                    c()
        while True:  # XID events, without waiting
            try:
                n.nvmlEventSetWait_v2(events, 0)
            except n.NVMLError:
                break
        tick += 1
        time.sleep(max(0.0, start + tick - time.monotonic()))


if __name__ == "__main__":
    main()
