"""A small torch training loop for gpuwatch's real-GPU checks.

Prints steps per second. Under `gpuwatch run` (GPUWATCH_SOCKET set) it also
sends step marks and torch's allocator numbers over the socket protocol
(docs/run.md). --leak keeps one tensor per step (a planted leak).
Usage: train_loop.py [--steps N | --seconds S] [--leak MiB] [--hold-gib G]"""
import argparse
import os
import socket
import time

import torch


def connect():
    path = os.environ.get("GPUWATCH_SOCKET")
    if not path:
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(f"hello framework=torch version={torch.__version__.split('+')[0]} pid={os.getpid()}\n".encode())
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=0.0, help="run this long instead of --steps")
    ap.add_argument("--leak", type=float, default=0.0, help="MiB kept per step")
    ap.add_argument("--hold-gib", type=float, default=0.0)
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    held = torch.empty(int(args.hold_gib * 2**30), dtype=torch.uint8, device=dev) if args.hold_gib else None
    kept = []
    sock = connect()
    x = torch.randn(2048, 4096, device=dev)
    for _ in range(5):  # warm-up
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step = 0
    while (time.perf_counter() - t0 < args.seconds) if args.seconds else (step < args.steps):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if args.leak:
            kept.append(torch.empty(int(args.leak * 2**20), dtype=torch.uint8, device=dev))
        if sock and step % 50 == 0:
            st = torch.cuda.memory_stats()
            sock.sendall(
                f"mark step={step}\nmem framework=torch device=0 allocated={st['allocated_bytes.all.current']} "
                f"reserved={st['reserved_bytes.all.current']} active={st['active_bytes.all.current']}\n".encode())
        step += 1
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"steps_per_second={step / dt:.2f} steps={step} seconds={dt:.2f}", flush=True)
    del held


if __name__ == "__main__":
    main()
