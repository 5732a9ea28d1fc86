"""pynvml reference for bench/sample_bench: the same NVML calls per sample
(those that succeed on this GPU, the driver's sample buffers read from the
last timestamp seen, XID events drained), in Python.
Usage: pynvml_bench.py ITERATIONS"""
import sys
import time

import pynvml as n


def calls(h):
    fv_ids = [82, 186, 185]
    return [
        lambda: n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2),
        lambda: n.nvmlDeviceGetUtilizationRates(h),
        lambda: n.nvmlDeviceGetEncoderUtilization(h),
        lambda: n.nvmlDeviceGetDecoderUtilization(h),
        lambda: n.nvmlDeviceGetTemperature(h, 0),
        lambda: n.nvmlDeviceGetFieldValues(h, fv_ids),
        lambda: n.nvmlDeviceGetPowerUsage(h),
        lambda: n.nvmlDeviceGetClockInfo(h, 0),
        lambda: n.nvmlDeviceGetClockInfo(h, 1),
        lambda: n.nvmlDeviceGetClockInfo(h, 2),
        lambda: n.nvmlDeviceGetPerformanceState(h),
        lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h),
        lambda: n.nvmlDeviceGetFanSpeed(h),
        lambda: n.nvmlDeviceGetBAR1MemoryInfo(h),
        lambda: n.nvmlDeviceGetComputeRunningProcesses(h),
        lambda: n.nvmlDeviceGetGraphicsRunningProcesses(h),
    ]


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    n.nvmlInit()
    h = n.nvmlDeviceGetHandleByIndex(0)
    ok = []
    for c in calls(h):
        try:
            c()
            ok.append(c)
        except n.NVMLError:
            pass

    last_seen = {n.NVML_TOTAL_POWER_SAMPLES: 0, n.NVML_GPU_UTILIZATION_SAMPLES: 0}
    try:
        events = n.nvmlEventSetCreate()
        n.nvmlDeviceRegisterEvents(h, n.nvmlEventTypeXidCriticalError, events)
    except n.NVMLError:
        events = None

    def putil():
        try:
            n.nvmlDeviceGetProcessUtilization(h, int(time.time() * 1e6) - 10_000_000)
        except n.NVMLError:
            pass
        for kind in last_seen:
            try:
                _, samples = n.nvmlDeviceGetSamples(h, kind, last_seen[kind])
                if samples:
                    last_seen[kind] = max(s.timeStamp for s in samples)
            except n.NVMLError:
                pass
        while events is not None:
            try:
                n.nvmlEventSetWait_v2(events, 0)
            except n.NVMLError:
                break

    for _ in range(20):
        for c in ok:
            c()
        putil()
    t0 = time.perf_counter()
    for _ in range(iterations):
        for c in ok:
            c()
        putil()
    us = (time.perf_counter() - t0) / iterations * 1e6
    print(f"pynvml us_per_sample={us:.2f} calls_ok={len(ok)}/16 events={events is not None} "
          f"iterations={iterations}")


if __name__ == "__main__":
    main()
