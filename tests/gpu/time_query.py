"""Median wall time of `nvidia-smi --query-gpu=F` against `gpuwatch query
--query-gpu=F`, same fields, alternating runs. Usage: time_query.py GPUWATCH N"""
import statistics
import subprocess
import sys
import time

FIELDS = ("index,uuid,name,serial,driver_version,pci.bus_id,pstate,temperature.gpu,"
          "temperature.memory,utilization.gpu,utilization.memory,memory.total,memory.used,"
          "memory.free,memory.reserved,power.draw,power.limit,enforced.power.limit,clocks.sm,"
          "clocks.mem,clocks.gr,fan.speed,compute_mode,persistence_mode,"
          "ecc.errors.uncorrected.volatile.total,timestamp")


def run(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    gpuwatch, n = sys.argv[1], int(sys.argv[2])
    smi_cmd = ["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv"]
    gw_cmd = [gpuwatch, "query", f"--query-gpu={FIELDS}", "--format=csv"]
    run(smi_cmd), run(gw_cmd)  # warm the page cache
    smi, gw = [], []
    for _ in range(n):
        smi.append(run(smi_cmd))
        gw.append(run(gw_cmd))
    start = [run([gpuwatch, "--version"]) for _ in range(n)]
    ms, mg = statistics.median(smi) * 1e3, statistics.median(gw) * 1e3
    print(f"gpuwatch --version (process start, no NVML) median_ms={statistics.median(start)*1e3:.1f}")
    print(f"fields={FIELDS.count(',') + 1} runs={n}")
    print(f"nvidia-smi median_ms={ms:.1f} min={min(smi)*1e3:.1f} max={max(smi)*1e3:.1f}")
    print(f"gpuwatch   median_ms={mg:.1f} min={min(gw)*1e3:.1f} max={max(gw)*1e3:.1f}")
    print(f"ratio gpuwatch/nvidia-smi={mg / ms:.3f}")


if __name__ == "__main__":
    main()
