#!/usr/bin/env python3
"""Writes scenarios/test/fixed.host/ (proc/ and etc/passwd): the host side of
fixed.yaml for the golden tests. Static, so every value is exact. Rerun after
changing a number; the output is checked in."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "fixed.host")
BTIME = 1795734000
UPTIME_S = 100000.0
CTR = "4b8e2f0c1d9a7e6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b"
# pid, comm, uid, argv, start (s after boot), cpu s, rss kB, cgroup
PROCS = [
    (5001, "python", 2001, ["python", "train.py", "--epochs", "3"], 90000, 15000, 8 * 1024 * 1024,
     f"0::/system.slice/docker-{CTR}.scope"),
    (5002, "python3", 2001, ["python3", "eval.py"], 99000, 100, 2 * 1024 * 1024,
     "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0"),
    (5003, "torchrun", 2002, ["torchrun", "--nproc_per_node=1", "serve.py"], 95000, 2500, 3 * 1024 * 1024,
     "0::/user.slice/user-2002.slice/session-3.scope"),
]


def write(path, text):
    path = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\nann:x:2001:2001::/home/ann:/bin/bash\n"
                    "ben:x:2002:2002::/home/ben:/bin/bash\n")
write("proc/stat", f"cpu  1 0 1 1 0 0 0 0 0 0\nbtime {BTIME}\n")
write("proc/uptime", f"{UPTIME_S:.2f} {UPTIME_S * 10:.2f}\n")
for pid, comm, uid, argv, start_s, cpu_s, rss_kb, cgroup in PROCS:
    ticks = cpu_s * 100
    fields = [str(pid), f"({comm})", "S", "1", str(pid), str(pid), "0", "-1", "4194304",
              "100", "0", "0", "0", str(ticks // 2), str(ticks - ticks // 2), "0", "0", "20", "0",
              "8", "0", str(start_s * 100), str(rss_kb * 4096), str(rss_kb // 4)]
    fields += ["0"] * 28
    write(f"proc/{pid}/stat", " ".join(fields) + "\n")
    write(f"proc/{pid}/status", f"Name:\t{comm}\nState:\tS (sleeping)\nTgid:\t{pid}\nPid:\t{pid}\n"
                                f"PPid:\t1\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
                                f"NSpid:\t{pid}\nVmRSS:\t{rss_kb} kB\nThreads:\t8\n")
    write(f"proc/{pid}/cmdline", "\0".join(argv) + "\0")
    write(f"proc/{pid}/cgroup", cgroup + "\n")
