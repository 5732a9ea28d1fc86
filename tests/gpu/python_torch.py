"""Real-GPU check of gpuwatch.torch (issue 6): a torch training loop on CUDA device 0 with a
Collector and a TorchMonitor. Checks that
  - memory_stats() equals torch.cuda.memory_stats()' own counters,
  - NVML's memory for this process >= torch's reserved (explain()), the gap is positive,
  - leak_check finds a planted leak (a list of 1 MiB tensors) and nothing without it,
  - oom_report writes its JSON (num_ooms >= 1, this pid in the snapshot) and re-raises.
Prints a JSON summary of what it measured; exits 1 when a check fails.
Usage: python3 tests/gpu/python_torch.py"""
import json
import os
import sys
import tempfile
import time

import torch

import gpuwatch
from gpuwatch import torch as gwt

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def main():
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.GELU(),
                                torch.nn.Linear(8192, 2048)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(1024, 2048, device=dev)

    def train_step():
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    summary = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    with gpuwatch.Sampler(interval=0.1) as sampler:
        collector = gpuwatch.Collector(sampler)
        monitor = gwt.TorchMonitor(every_n_steps=10, collector=collector)
        with collector("train"):
            for _ in range(100):
                train_step()
                monitor.step()
            torch.cuda.synchronize()
            sampler.wait(timeout=5)
            sampler.wait(timeout=5)  # a sample taken after the loop's memory was reserved
            window = collector.collect()
        monitor.close()
    steps = [r["step"] for r in monitor.timeline]
    check(steps == list(range(10, 101, 10)), f"timeline steps {steps}")
    timing = gwt.TorchMonitor(every_n_steps=1)
    t0 = time.perf_counter()
    for _ in range(1000):
        timing.step()  # memory_stats() and a timeline record each step
    summary["monitor_step_cost_us"] = round((time.perf_counter() - t0) * 1e3, 2)

    ours, raw = gwt.memory_stats(0), torch.cuda.memory_stats(0)
    for name, key in gwt.STATS_KEYS.items():
        if key in raw:
            check(ours.get(name) == raw[key], f"memory_stats {name}={ours.get(name)} but torch's "
                                              f"{key}={raw[key]}")
    check(ours["allocated"] == torch.cuda.memory_allocated(0), "allocated != memory_allocated()")
    check(ours["reserved"] == torch.cuda.memory_reserved(0), "reserved != memory_reserved()")
    summary["memory_stats"] = ours

    e = gwt.explain(0)
    summary["explain"] = {"gpu": e.gpu, "process_used": e.process_used, "reserved": e.reserved,
                          "allocated": e.allocated,
                          "context_and_libraries": e.context_and_libraries,
                          "allocator_cache": e.allocator_cache}
    print(e.text, file=sys.stderr)
    check(e.gpu is not None, "the CUDA device was not found among NVML's GPUs")
    if check(e.process_used is not None, f"NVML lists no memory for pid {os.getpid()}"):
        check(e.process_used >= e.reserved, f"NVML {e.process_used} < reserved {e.reserved}")
        check(e.context_and_libraries > 0, "no CUDA context outside the allocator?")
    key = f"train/gpu{e.gpu}/memory_used_bytes/max"
    summary["collector_memory_used_max"] = window.get(key)
    check(window.get(key, 0) >= e.reserved, f"{key}={window.get(key)} < reserved")

    kept = []

    def leaky():
        train_step()
        kept.append(torch.empty(2**20, dtype=torch.uint8, device=dev))

    leak = gwt.leak_check(leaky, iterations=100)
    clean = gwt.leak_check(train_step, iterations=100)
    kept.clear()
    summary["leak_planted"] = {"leak": leak.leak, "bytes_per_iteration": leak.bytes_per_iteration}
    summary["leak_none"] = {"leak": clean.leak, "bytes_per_iteration": clean.bytes_per_iteration}
    check(leak.leak and 0.9 * 2**20 <= leak.bytes_per_iteration <= 1.1 * 2**20,
          f"planted 1 MiB/iteration: {leak.explanation}")
    check(not clean.leak, f"no leak planted: {clean.explanation}")

    path = os.path.join(tempfile.mkdtemp(), "oom.json")
    total = torch.cuda.get_device_properties(0).total_memory
    try:
        with gwt.oom_report(path=path, monitor=monitor):
            torch.empty(2 * total, dtype=torch.uint8, device=dev)
        check(False, "allocating twice the GPU's memory did not raise")
    except Exception as err:  # noqa: BLE001 - which class torch raises is what is checked
        check(gwt.is_oom(err), f"not an OOM: {type(err).__name__}: {err}")
    if check(os.path.exists(path), "oom_report wrote nothing"):
        with open(path) as f:
            doc = json.load(f)
        pids = {p["pid"] for d in doc["snapshot"].get("devices", []) for p in d["processes"]}
        summary["oom_report"] = {"bytes": os.path.getsize(path), "timeline": len(doc["timeline"]),
                                 "num_ooms": doc["memory_stats"]["0"].get("num_ooms")}
        check(doc["memory_stats"]["0"].get("num_ooms", 0) >= 1, "num_ooms not counted")
        check(os.getpid() in pids, "this pid is not in the report's snapshot")
        check(len(doc["timeline"]) == 10, "the monitor's timeline is not in the report")

    summary["failures"] = failures
    print(json.dumps(summary, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
