"""Torch jobs of real training shapes for gpuwatch's leak checks on a GPU
(issue 12): each runs a small MLP step every --step-s seconds for --seconds and
prints one JSON line with its pid and what it does.

  --kind leak_fast   keeps 48 MiB every step (at 0.5 s steps: ~5.6 GiB/min)
  --kind leak_late   keeps 16 MiB every step from 30 s on (~1.9 GiB/min)
  --kind cache_warm  grows a cache by 96 MiB a step for 60 s (~11 GiB/min), then flat
  --kind sawtooth    takes and frees a 2 GiB block each step; empty_cache() every 10 steps
"""
import argparse
import json
import os
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True,
                    choices=["leak_fast", "leak_late", "cache_warm", "sawtooth"])
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--step-s", type=float, default=0.5)
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 2048)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(1024, 2048, device=dev)
    kept = []
    t0 = time.time()
    print(json.dumps({"pid": os.getpid(), "kind": args.kind, "start": t0}), flush=True)
    step = 0
    while time.time() - t0 < args.seconds:
        started = time.time()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        age = time.time() - t0
        if args.kind == "leak_fast":
            kept.append(torch.empty(48 << 20, dtype=torch.uint8, device=dev))
        elif args.kind == "leak_late" and age >= 30:
            kept.append(torch.empty(16 << 20, dtype=torch.uint8, device=dev))
        elif args.kind == "cache_warm" and age < 60:
            kept.append(torch.empty(96 << 20, dtype=torch.uint8, device=dev))
        elif args.kind == "sawtooth":
            block = torch.ones(2 << 30, dtype=torch.uint8, device=dev)
            del block
            if step % 10 == 9:
                torch.cuda.empty_cache()
        torch.cuda.synchronize()
        step += 1
        time.sleep(max(0.0, args.step_s - (time.time() - started)))
    print(json.dumps({"pid": os.getpid(), "kind": args.kind, "steps": step,
                      "kept_gib": sum(t.numel() for t in kept) / 2**30}), flush=True)


if __name__ == "__main__":
    main()
