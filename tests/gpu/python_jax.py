"""Real-GPU check of gpuwatch.jax (issue 6): a JAX process with the default pre-allocation
(the XLA_* variables that change it are removed before JAX starts). Checks that
preallocation() flags it, that NVML's memory for this process is about 75 % of the GPU's,
and that memory_stats() and a JaxMonitor record XLA's numbers. Prints a JSON summary;
exits 1 when a check fails. Usage: python3 tests/gpu/python_jax.py"""
import json
import os
import sys

for name in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
             "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"):
    os.environ.pop(name, None)

import jax  # noqa: E402 - after the environment is cleaned
import jax.numpy as jnp  # noqa: E402

from gpuwatch import jax as gwj  # noqa: E402


def main():
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    x = jnp.ones((4096, 4096), dtype=jnp.float32)  # 64 MiB
    y = (x @ x).block_until_ready()
    stats = gwj.memory_stats()
    check(stats.get("bytes_in_use", 0) >= 2 * 64 * 2**20, f"bytes_in_use {stats}")
    check("bytes_limit" in stats and "peak_bytes_in_use" in stats, f"keys: {sorted(stats)}")

    p = gwj.preallocation()
    print(p.text, file=sys.stderr)
    check(p.preallocate and p.fraction == 0.75, "pre-allocation not detected from the environment")
    check(p.total_bytes is not None, "the JAX device was not found among NVML's GPUs")
    check(p.process_used_bytes is not None, f"NVML lists no memory for pid {os.getpid()}")
    check(p.observed_fraction is not None and 0.70 <= p.observed_fraction <= 0.85,
          f"NVML: this process holds {p.observed_fraction} of the GPU, expected ~0.75")

    monitor = gwj.JaxMonitor(every_n_steps=5)
    for _ in range(20):
        y = (y @ x).block_until_ready() / 4096.0
        monitor.step()
    monitor.close()
    steps = [(r["step"], r["device"]) for r in monitor.timeline]
    check([s for s, _ in steps] == [5, 10, 15, 20], f"timeline {steps}")
    check(all(r.get("allocated", 0) > 0 and r.get("limit", 0) > 0 for r in monitor.timeline),
          "timeline records without allocated / limit")

    print(json.dumps({"jax": jax.__version__, "device": str(jax.devices()[0]),
                      "memory_stats": stats, "preallocation": {
                          "preallocate": p.preallocate, "fraction": p.fraction,
                          "total_bytes": p.total_bytes,
                          "process_used_bytes": p.process_used_bytes,
                          "observed_fraction": p.observed_fraction,
                          "bytes_limit": p.bytes_limit},
                      "timeline": list(monitor.timeline), "failures": failures}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
