"""CPU per sample of gpuwatch's whole pipeline against GPUs and processes, next to
the C loop making the same NVML calls at the same rate (bench/nvml_c_loop.c).

    python3 bench/sample_scaling.py BUILD_DIR [SECONDS] [INTERVAL_MS]

For each shape (1 GPU with 0, 64 and 512 processes; 8 GPUs with 0, 8 and 64
processes each: 0, 64 and 512 in all) it writes a fake-NVML scenario
(bench/fleet_scenario.py), runs `gpuwatch watch -q -i INTERVAL_MS` on it for
SECONDS (default 30 s at 100 ms: 300 samples) and, one after the other, the C
loop for as many samples, and prints CPU time (user + system, from
getrusage of the child) per sample of each, and their ratio. The watch
pipeline is the daemon's without HTTP: sampling, attribution (/proc), rules,
diagnoses, leak detection. The fake NVML answers in microseconds, so this is
gpuwatch's own work; on a real GPU the driver's calls add the same to both."""
import os
import resource
import subprocess
import sys
import tempfile

import fleet_scenario

build = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30
interval_ms = int(sys.argv[3]) if len(sys.argv) > 3 else 100
samples = int(seconds * 1000 / interval_ms)


def cpu_of(cmd, env):
    """CPU seconds (user + system) the command took, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), rc


tmp = tempfile.mkdtemp()
env = dict(os.environ)
env.pop("GPUWATCH_FAKE_TIME", None)
env["GPUWATCH_NVML_LIBRARY"] = os.path.join(build, "lib", "libnvidia-ml-fake.so")
print(f"{samples} samples at {interval_ms} ms each")
print("| GPUs | processes | gpuwatch watch µs CPU / sample | C loop µs CPU / sample | ratio |")
print("| --- | --- | --- | --- | --- |")
for gpus, per_gpu in ((1, 0), (1, 64), (1, 512), (8, 0), (8, 8), (8, 64)):
    scenario = os.path.join(tmp, f"fleet{gpus}x{per_gpu}.yaml")
    fleet_scenario.write(scenario, gpus, per_gpu)
    env["GPUWATCH_FAKE_SCENARIO"] = scenario
    gw, gw_rc = cpu_of([os.path.join(build, "gpuwatch"), "--scenario", scenario, "watch", "-q",
                        "-i", f"{interval_ms}ms", "--duration", f"{seconds}s"], env)
    c, c_rc = cpu_of([os.path.join(build, "bench", "nvml_c_loop"), str(samples), "ok",
                      str(interval_ms)], env)
    gw_us, c_us = 1e6 * gw / samples, 1e6 * c / samples
    flag = "" if gw_rc == 0 and c_rc == 0 else f" (exit {gw_rc} / {c_rc})"
    print(f"| {gpus} | {gpus * per_gpu} | {gw_us:.0f} | {c_us:.0f} | "
          f"{gw_us / c_us if c_us else float('inf'):.1f}{flag} |")
