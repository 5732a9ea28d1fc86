"""CPU per sample of gpuwatch's whole pipeline against GPUs and processes, next to
the C loop making the same NVML calls at the same rate (bench/nvml_c_loop.c).

    python3 bench/sample_scaling.py BUILD_DIR [SECONDS] [INTERVAL_MS] [--live]

For each shape (1 GPU with 0, 64 and 512 processes; 8 GPUs with 0, 8 and 64
processes each: 0, 64 and 512 in all) it writes a fake-NVML scenario
(bench/fleet_scenario.py), runs `gpuwatch watch -q -i INTERVAL_MS` on it for
SECONDS (default 30 s at 100 ms: 300 samples) and, one after the other, the C
loop for as many samples, and prints CPU time (user + system, from
getrusage of the child) per sample of each, and their ratio. The watch
pipeline is the daemon's without HTTP: sampling, attribution (/proc), rules,
diagnoses, leak detection. The fake NVML answers in microseconds, so this is
gpuwatch's own work; on a real GPU the driver's calls add the same to both.
By default the processes' pids are none of this host's, so attribution finds
no /proc entry; --live starts 512 idle processes (sleep) and lists theirs, so
each is read from /proc as a real GPU process would be."""
import os
import resource
import subprocess
import sys
import tempfile

import fleet_scenario

live = "--live" in sys.argv
args = [a for a in sys.argv[1:] if a != "--live"]
build = args[0]
seconds = float(args[1]) if len(args) > 1 else 30
interval_ms = int(args[2]) if len(args) > 2 else 100
samples = int(seconds * 1000 / interval_ms)


def cpu_of(cmd, env):
    """CPU seconds (user + system) the command took, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), rc


sleepers = [subprocess.Popen(["sleep", "100000"]) for _ in range(512 if live else 0)]
pids = [p.pid for p in sleepers] or None
tmp = tempfile.mkdtemp()
env = dict(os.environ)
env.pop("GPUWATCH_FAKE_TIME", None)
env["GPUWATCH_NVML_LIBRARY"] = os.path.join(build, "lib", "libnvidia-ml-fake.so")
print(f"{samples} samples at {interval_ms} ms each")
print("| GPUs | processes | gpuwatch watch µs CPU / sample | C loop µs CPU / sample | ratio |")
print("| --- | --- | --- | --- | --- |")
try:
    for gpus, per_gpu in ((1, 0), (1, 64), (1, 512), (8, 0), (8, 8), (8, 64)):
        scenario = os.path.join(tmp, f"fleet{gpus}x{per_gpu}.yaml")
        fleet_scenario.write(scenario, gpus, per_gpu, pids)
        env["GPUWATCH_FAKE_SCENARIO"] = scenario
        gw, gw_rc = cpu_of([os.path.join(build, "gpuwatch"), "--scenario", scenario, "watch", "-q",
                            "-i", f"{interval_ms}ms", "--duration", f"{seconds}s"], env)
        c, c_rc = cpu_of([os.path.join(build, "bench", "nvml_c_loop"), str(samples), "ok",
                          str(interval_ms)], env)
        gw_us, c_us = 1e6 * gw / samples, 1e6 * c / samples
        flag = "" if gw_rc == 0 and c_rc == 0 else f" (exit {gw_rc} / {c_rc})"
        print(f"| {gpus} | {gpus * per_gpu} | {gw_us:.0f} | {c_us:.0f} | "
              f"{gw_us / c_us if c_us else float('inf'):.1f}{flag} |")
finally:
    for p in sleepers:
        p.kill()
        p.wait()
