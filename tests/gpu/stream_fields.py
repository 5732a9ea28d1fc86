"""Summarises the stream fields in a `gpuwatch watch --jsonl` recording of a
real GPU: per sample, the 1 s power reading against the peak of the 20 ms
driver samples since the previous sample, utilization against the mean of
the driver's samples, and the XID counter. Usage: stream_fields.py FILE"""
import json
import sys

rows = []
unavailable = {}
for line in open(sys.argv[1]):
    doc = json.loads(line)
    if doc.get("type") != "sample":
        continue
    d = doc["devices"][0]
    f = d.get("fields", {})
    for k, why in d.get("unavailable", {}).items():
        unavailable[k] = why
    rows.append((f.get("power_draw_watts"), f.get("power_draw_peak_watts"),
                 f.get("utilization_gpu_ratio"), f.get("utilization_gpu_mean_ratio"),
                 f.get("xid_errors_total"), f.get("xid_last")))
print("sample  power_W  peak_W  util  util_mean  xid_total  xid_last")
for i, r in enumerate(rows):
    print(f"{i:6d}  " + "  ".join("-" if v is None else f"{v:.3g}" for v in r))
gaps = [r[1] - r[0] for r in rows if r[0] is not None and r[1] is not None]
if gaps:
    print(f"peak - reading: max {max(gaps):.1f} W, mean {sum(gaps) / len(gaps):.1f} W over {len(gaps)} samples")
print(f"samples={len(rows)} with peak={sum(r[1] is not None for r in rows)} "
      f"with util_mean={sum(r[3] is not None for r in rows)} with xid={sum(r[4] is not None for r in rows)}")
print("unavailable:", unavailable or "none")
