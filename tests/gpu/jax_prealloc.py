"""JAX with its default pre-allocation (75 % of the GPU at first use), then
idle, so `gpuwatch run` can diagnose it. Usage: jax_prealloc.py SECONDS"""
import sys
import time

import jax.numpy as jnp

x = jnp.ones((1024, 1024))
print("jax allocated; sum =", float(x.sum()), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 75)
