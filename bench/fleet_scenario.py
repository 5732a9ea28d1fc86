"""A fake-NVML scenario of GPUS H200s with PROCS processes each (the largest
/metrics body and the heaviest attribution the benchmarks use).

    python3 bench/fleet_scenario.py OUT.yaml [GPUS] [PROCS]    (default 8 x 64)"""
import sys


def write(path, gpus=8, procs=64, pids=None):
    """`pids`: the processes' pids, GPU by GPU (at least gpus * procs); by
    default 100000 + 1000 * gpu + index, pids no process of this host has."""
    with open(path, "w") as f:
        f.write("clock: wall\nperiod: 1h\ndevices:\n")
        for g in range(gpus):
            f.write(f"  - name: NVIDIA H200\n    utilization_gpu: {{constant: 80, noise: 5}}\n"
                    f"    temperature_gpu: {{constant: 60, noise: 2}}\n    power_draw: {{constant: 500, noise: 20}}\n"
                    f"    processes:{'' if procs else ' []'}\n")
            for p in range(procs):
                pid = pids[g * procs + p] if pids else 100000 + g * 1000 + p
                f.write(f"      - {{pid: {pid}, memory: {{constant: {1 + p % 2}GiB, noise: 10MiB}}, "
                        f"sm_util: {{constant: 1, noise: 1}}}}\n")


if __name__ == "__main__":
    write(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
