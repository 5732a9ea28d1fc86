"""A field of /proc/PID/status, for the benchmarks that watch a process's memory."""


def status_kib(pid, key):
    """`key` (VmRSS, VmHWM, ...) of process `pid` in KiB; 0 when absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0
