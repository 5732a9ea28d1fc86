"""What /proc says of a process, for the benchmarks that watch one: a field of its
status (memory) and the CPU it has used."""

import os

TICKS = os.sysconf("SC_CLK_TCK")


def status_kib(pid, key):
    """`key` (VmRSS, VmHWM, ...) of process `pid` in KiB; 0 when absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """Seconds of CPU process `pid` has used (user + system), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS
