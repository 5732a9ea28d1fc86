#!/usr/bin/env python3
"""Writes the demo host tree (proc/, etc/passwd and the kubelet's
var/log/containers) that `gpuwatch --demo`
reads as its --host-proc. Static on purpose: CPU averages come from the
tree's own proc/uptime, so they are the same on every run. Rerun after
changing a number here; the output is checked in."""
import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = 100  # USER_HZ on every Linux
BTIME = 1795734000  # 2026-11-26 20:20 UTC
UPTIME_S = 286200.42  # the tree's "now": BTIME + 3 days 7.5 h
GIB_KB = 1024 * 1024


def hex64(name):
    return hashlib.sha256(name.encode()).hexdigest()


ALICE_CTR = hex64("demo-alice-llama")
FRANK_CTR = hex64("demo-frank-jax")
ERIN_NB_CTR = hex64("demo-erin-notebook")
ERIN_SERVE_CTR = hex64("demo-erin-serve")
CAROL_CTR = hex64("demo-carol-resnet")
CAROL_POD = "3f1c9a2e-7b4d-4e8a-9c61-2d5f80b7a4e3"
# The kubelet's log link of carol's container: its pod, namespace and container names.
CAROL_LOG_LINK = f"resnet50-train-6d8f9c7b5-xk2lq_team-vision_trainer-{CAROL_CTR}.log"

USERS = [("alice", 1001), ("bob", 1002), ("carol", 1003), ("dave", 1004),
         ("erin", 1005), ("frank", 1006)]

# pid, comm, uid, argv, started (s before now), cpu ratio since start,
# RSS kB, threads, cgroup path (v2), NSpid inside its container (or None)
PROCS = [
    (41001, "python", 1001,
     ["python", "train.py", "--model", "llama-7b", "--batch-size", "16", "--rank", "0"],
     5 * 3600 + 12 * 60, 1.62, 12 * GIB_KB + 301 * 1024, 58,
     f"/system.slice/docker-{ALICE_CTR}.scope", 7),
    (41002, "python", 1001,
     ["python", "train.py", "--model", "llama-7b", "--batch-size", "16", "--rank", "1"],
     5 * 3600 + 12 * 60 - 3, 1.58, 12 * GIB_KB + 188 * 1024, 57,
     f"/system.slice/docker-{ALICE_CTR}.scope", 8),
    (41101, "python", 1002,
     ["python", "finetune.py", "--lr", "3e-5", "--epochs", "10"],
     2 * 3600 + 40 * 60, 0.91, 6 * GIB_KB + 420 * 1024, 24,
     "/system.slice/slurmstepd.scope/job_88123/step_batch/user/task_0", None),
    (41201, "torchrun", 1003,
     ["torchrun", "--nproc_per_node=1", "resnet50.py", "--amp"],
     9 * 3600 + 5 * 60, 1.24, 8 * GIB_KB + 77 * 1024, 41,
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
     f"{CAROL_POD.replace('-', '_')}.slice/cri-containerd-{CAROL_CTR}.scope", 1),
    (41301, "python", 1004,
     ["python", "etl_train.py", "--num-workers", "0"],
     1 * 3600 + 30 * 60, 0.995, 3 * GIB_KB + 512 * 1024, 9,
     "/user.slice/user-1004.slice/session-12.scope", None),
    (41401, "python", 1005,
     ["python", "-m", "ipykernel_launcher", "-f", "/run/user/1005/kernel-7.json"],
     26 * 3600 + 14 * 60, 0.02, 2 * GIB_KB + 160 * 1024, 17,
     f"/machine.slice/libpod-{ERIN_NB_CTR}.scope/container", 2),
    (41402, "python", 1005,
     ["python", "serve.py", "--port", "8000"],
     3 * 3600 + 2 * 60, 0.35, 4 * GIB_KB + 512 * 1024, 12,
     "/user.slice/user-1005.slice/user@1005.service/user.slice/"
     f"libpod-{ERIN_SERVE_CTR}.scope/container", 1),
    (41501, "python", 1006,
     ["python", "jax_train.py", "--config", "configs/vit.py"],
     45 * 60, 1.10, 9 * GIB_KB + 256 * 1024, 96,
     f"/system.slice/docker-{FRANK_CTR}.scope", 1),
]


def write(path, text, mode="w"):
    full = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, mode) as f:
        f.write(text)


def main():
    write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
          "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" +
          "".join(f"{n}:x:{u}:{u}:{n.title()}:/home/{n}:/bin/bash\n" for n, u in USERS))
    write(f"var/log/containers/{CAROL_LOG_LINK}", "")
    write("proc/uptime", f"{UPTIME_S:.2f} {UPTIME_S * 55.3:.2f}\n")
    write("proc/stat",
          "cpu  48211907 1203 9120442 1424410023 88120 0 301772 0 0 0\n"
          "intr 3189034771 0 0 0\nctxt 9812370144\n"
          f"btime {BTIME}\nprocesses 912773\nprocs_running 9\nprocs_blocked 0\n")
    for (pid, comm, uid, argv, ago, ratio, rss_kb, threads, cgroup, nspid) in PROCS:
        start_ticks = round((UPTIME_S - ago) * TICKS)
        cpu_ticks = round(ratio * ago * TICKS)
        utime, stime = cpu_ticks * 9 // 10, cpu_ticks - cpu_ticks * 9 // 10
        vsize = rss_kb * 1024 * 3
        fields = ["S", 1, pid, pid, 0, -1, 4194560, 2812331, 0, 1712, 0, utime, stime,
                  0, 0, 20, 0, threads, 0, start_ticks, vsize, rss_kb // 4,
                  18446744073709551615, 1, 1, 0, 0, 0, 0, 16781312, 16386, 1134, 0, 0, 0,
                  17, pid % 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        write(f"proc/{pid}/stat", f"{pid} ({comm}) " + " ".join(map(str, fields)) + "\n")
        ns = f"{pid}\t{nspid}" if nspid is not None else f"{pid}"
        write(f"proc/{pid}/status",
              f"Name:\t{comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{pid}\n"
              f"Ngid:\t0\nPid:\t{pid}\nPPid:\t1\nTracerPid:\t0\n"
              f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
              f"FDSize:\t256\nGroups:\t{uid}\nNStgid:\t{ns}\nNSpid:\t{ns}\nNSpgid:\t{ns}\n"
              f"NSsid:\t{ns}\nVmPeak:\t{vsize // 1024 + 524288} kB\nVmSize:\t{vsize // 1024} kB\n"
              f"VmLck:\t0 kB\nVmPin:\t0 kB\nVmHWM:\t{rss_kb + 65536} kB\nVmRSS:\t{rss_kb} kB\n"
              f"RssAnon:\t{rss_kb - 204800} kB\nRssFile:\t204800 kB\nRssShmem:\t0 kB\n"
              f"Threads:\t{threads}\n")
        write(f"proc/{pid}/cmdline", "".join(a + "\0" for a in argv))
        write(f"proc/{pid}/cgroup", f"0::{cgroup}\n")


if __name__ == "__main__":
    main()
