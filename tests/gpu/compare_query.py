"""Compares `nvidia-smi --query-gpu` with `gpuwatch query` field by field.

Usage: compare_query.py SMI_CSV GPUWATCH_CSV
Both files: the same --query-gpu fields with --format=csv (header + rows).
Static fields must be identical; dynamic ones within a tolerance (they are
read a few milliseconds apart). Prints a table and exits 1 on a mismatch."""
import sys

# Fields whose value moves between two reads, and how far it may move.
TOLERANCE = {
    "timestamp": None,  # always differs
    "temperature.gpu": 2, "temperature.memory": 2,
    "utilization.gpu": 10, "utilization.memory": 10,
    "utilization.encoder": 5, "utilization.decoder": 5,
    "memory.used": 64, "memory.free": 64,
    "power.draw": 40, "power.draw.instant": 60, "power.draw.average": 40,
    "clocks.current.sm": 300, "clocks.current.graphics": 300, "clocks.current.memory": 100,
    "pstate": None, "clocks_event_reasons.active": None,
    "pcie.link.gen.current": None, "pcie.link.width.current": None,
}


def number(text):
    for suffix in (" MiB", " W", " MHz", " %"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    return float(text)


def main(smi_path, gw_path):
    smi = [l.rstrip("\n") for l in open(smi_path) if l.strip()]
    gw = [l.rstrip("\n") for l in open(gw_path) if l.strip()]
    bad = 0
    smi_head, gw_head = smi[0].split(", "), gw[0].split(", ")
    if smi_head != gw_head:
        print("HEADER MISMATCH\n nvidia-smi: %s\n gpuwatch:   %s" % (smi[0], gw[0]))
        bad += 1
    print(f"{'field':45} {'nvidia-smi':28} {'gpuwatch':28} verdict")
    for row_smi, row_gw in zip(smi[1:], gw[1:]):
        for name, a, b in zip(smi_head, row_smi.split(", "), row_gw.split(", ")):
            key = name.split(" [")[0]
            if a == b:
                verdict = "identical"
            elif key in TOLERANCE:
                tol = TOLERANCE[key]
                try:
                    ok = tol is None or abs(number(a) - number(b)) <= tol
                except ValueError:
                    ok = False
                verdict = f"dynamic, within {tol}" if ok else "DIFFERS"
                bad += 0 if ok else 1
            else:
                verdict = "DIFFERS"
                bad += 1
            print(f"{key:45} {a:28} {b:28} {verdict}")
    print(f"\n{bad} mismatch(es)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
