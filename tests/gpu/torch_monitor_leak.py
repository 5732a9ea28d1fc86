"""gpuwatch.torch.TorchMonitor in a loop that keeps 8 MiB every step for 300
steps, reporting every 5 steps: under `gpuwatch run` the framework's series
must get a per-step verdict (issue 12). Usage: torch_monitor_leak.py [STEPS]"""
import sys
import time

import torch

from gpuwatch.torch import TorchMonitor

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
dev = torch.device("cuda")
model = torch.nn.Linear(2048, 2048).to(dev)
x = torch.randn(512, 2048, device=dev)
monitor = TorchMonitor(every_n_steps=5)
kept = []
for step in range(1, steps + 1):
    model(x).sum().backward()
    kept.append(torch.empty(8 << 20, dtype=torch.uint8, device=dev))
    torch.cuda.synchronize()
    monitor.step()
    time.sleep(0.05)
monitor.close()
print(f"steps={steps} kept_mib={len(kept) * 8}", flush=True)
