"""What this driver's sample buffers and XID events look like, straight
through NVML (ctypes, no gpuwatch): how many power and utilization samples
one nvmlDeviceGetSamples call returns, their spacing and span, whether XID
events can be registered, and what a non-blocking nvmlEventSetWait_v2 costs.
Usage: sample_buffers.py"""
import ctypes
import statistics
import time

nvml = ctypes.CDLL("libnvidia-ml.so.1")


class Sample(ctypes.Structure):
    _fields_ = [("timeStamp", ctypes.c_ulonglong), ("value", ctypes.c_ulonglong)]


class EventData(ctypes.Structure):
    _fields_ = [("device", ctypes.c_void_p), ("eventType", ctypes.c_ulonglong),
                ("eventData", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


assert nvml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0

for kind, name in ((0, "TOTAL_POWER (mW)"), (1, "GPU_UTILIZATION (%)")):
    vt, n = ctypes.c_int(), ctypes.c_uint(0)
    rc = nvml.nvmlDeviceGetSamples(dev, kind, ctypes.c_ulonglong(0), ctypes.byref(vt), ctypes.byref(n), None)
    if rc != 0:
        print(f"{name}: count query rc={rc}")
        continue
    buf = (Sample * max(1, n.value))()
    rc = nvml.nvmlDeviceGetSamples(dev, kind, ctypes.c_ulonglong(0), ctypes.byref(vt), ctypes.byref(n), buf)
    ts = [buf[i].timeStamp for i in range(n.value)]
    vals = [buf[i].value & 0xFFFFFFFF for i in range(n.value)]  # unsigned int values
    gaps = [(b - a) / 1000 for a, b in zip(ts, ts[1:]) if b > a]
    print(f"{name}: rc={rc} value_type={vt.value} samples={n.value} "
          f"span_ms={(max(ts) - min(ts)) / 1000 if ts else 0:.0f} "
          f"median_gap_ms={statistics.median(gaps) if gaps else 0:.1f} "
          f"min={min(vals) if vals else None} max={max(vals) if vals else None} "
          f"newest_age_ms={(time.time() * 1e6 - max(ts)) / 1000 if ts else 0:.0f}")
    # A second call 1 s later from the newest timestamp: only the new ones.
    time.sleep(1)
    last = ctypes.c_ulonglong(max(ts) if ts else 0)
    n2 = ctypes.c_uint(len(buf))
    rc = nvml.nvmlDeviceGetSamples(dev, kind, last, ctypes.byref(vt), ctypes.byref(n2), buf)
    print(f"  1 s later from lastSeenTimeStamp: rc={rc} new_samples={n2.value if rc == 0 else 0}")
    # The cost of one call from the newest timestamp (what a sampler pays each read).
    codes = {}
    t0 = time.perf_counter()
    for _ in range(200):
        n2 = ctypes.c_uint(len(buf))
        r = nvml.nvmlDeviceGetSamples(dev, kind, last, ctypes.byref(vt), ctypes.byref(n2), buf)
        codes[r] = codes.get(r, 0) + 1
    us = (time.perf_counter() - t0) / 200 * 1e6
    print(f"  {us:.0f} us per nvmlDeviceGetSamples call (ctypes, 200 calls), return codes {codes}")

supported = ctypes.c_ulonglong(0)
rc = nvml.nvmlDeviceGetSupportedEventTypes(dev, ctypes.byref(supported))
print(f"supported event types: rc={rc} mask=0x{supported.value:x} (XID critical = 0x8)")
es = ctypes.c_void_p()
rc = nvml.nvmlEventSetCreate(ctypes.byref(es))
rc2 = nvml.nvmlDeviceRegisterEvents(dev, ctypes.c_ulonglong(0x8), es) if rc == 0 else -1
print(f"nvmlEventSetCreate rc={rc}, nvmlDeviceRegisterEvents(XID) rc={rc2}")
if rc2 == 0:
    data = EventData()
    t0 = time.perf_counter()
    codes = {}
    for _ in range(2000):
        r = nvml.nvmlEventSetWait_v2(es, ctypes.byref(data), 0)
        codes[r] = codes.get(r, 0) + 1
    us = (time.perf_counter() - t0) / 2000 * 1e6
    print(f"nvmlEventSetWait_v2(timeout 0): {us:.1f} us per call (ctypes), return codes {codes} (10 = TIMEOUT: none)")
    nvml.nvmlEventSetFree(es)
