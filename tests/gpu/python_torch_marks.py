"""A torch training loop that reports through gpuwatch.torch's TorchMonitor: under
`gpuwatch run` it sends torch's allocator numbers and a step mark every 50 steps over
GPUWATCH_SOCKET (python_under_run.sh checks what run recorded).
Usage: python_torch_marks.py [STEPS]"""
import json
import os
import sys

import torch

from gpuwatch import torch as gwt


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    if not os.environ.get("GPUWATCH_SOCKET"):
        print("GPUWATCH_SOCKET is not set: run me under `gpuwatch run`", file=sys.stderr)
        return 2
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(),
                                torch.nn.Linear(8192, 4096)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(2048, 4096, device=dev)
    monitor = gwt.TorchMonitor(every_n_steps=50)
    if monitor.reporter.socket is None:
        print("could not connect to GPUWATCH_SOCKET", file=sys.stderr)
        return 2
    for _ in range(steps):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        monitor.step()
    torch.cuda.synchronize()
    monitor.close()
    last = monitor.timeline[-1]
    print(json.dumps({"steps": steps, "records": len(monitor.timeline), "last": last}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
