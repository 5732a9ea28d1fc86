"""Training loops for `gpuwatch sweep` on a real GPU (tests/gpu/run_sweep_h200.sh).

Models are built from code, nothing is downloaded:
  resnet50  torchvision's ResNet-50, 224x224 images, SGD, bf16 autocast
  gpt2      a GPT-2-size decoder (12 layers, 768 wide, 12 heads, 1024 tokens, 50257 vocab),
            pre-norm, torch's scaled_dot_product_attention (causal), AdamW, bf16 autocast
  mlp       a small MLP (for --concurrency)
Runs until killed (gpuwatch ends it after --steps marks) or --max-steps. Under gpuwatch
(GPUWATCH_SOCKET set) it sends a step mark per step and torch's allocator numbers
(docs/run.md's protocol; the peaks of reserved and inactive split memory as gpuwatch.torch does); a CUDA out-of-memory error ends it with torch's own message.
Usage: sweep_models.py MODEL --batch N [--max-steps N]"""
import argparse
import os
import socket
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class Gpt2(nn.Module):
    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def build(name, batch, dev):
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50().to(dev).to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (batch,), device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return model, opt, lambda: F.cross_entropy(model(x), y)
    if name == "gpt2":
        model = Gpt2().to(dev)
        idx = torch.randint(0, 50257, (batch, 1024), device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        return model, opt, lambda: F.cross_entropy(model(idx[:, :-1]).flatten(0, 1), idx[:, 1:].flatten())
    if name == "mlp":
        model = nn.Sequential(nn.Linear(4096, 8192), nn.GELU(), nn.Linear(8192, 4096)).to(dev)
        x = torch.randn(batch, 4096, device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        return model, opt, lambda: model(x).square().mean()
    raise SystemExit(f"unknown model {name!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--max-steps", type=int, default=10**9)
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model, opt, loss_of = build(args.model, args.batch, dev)
    sock = None
    if os.environ.get("GPUWATCH_SOCKET"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(os.environ["GPUWATCH_SOCKET"])
        sock.sendall(f"hello framework=torch version={torch.__version__.split('+')[0]} pid={os.getpid()}\n".encode())
    t0 = time.perf_counter()
    for step in range(args.max_steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if sock:
            st = torch.cuda.memory_stats()
            sock.sendall(
                f"mark step={step}\nmem framework=torch device=0 allocated={st['allocated_bytes.all.current']} "
                f"reserved={st['reserved_bytes.all.current']} peak_allocated={st['allocated_bytes.all.peak']} "
                f"peak_reserved={st['reserved_bytes.all.peak']} "
                f"peak_inactive_split={st['inactive_split_bytes.all.peak']} "
                f"inactive_split={st['inactive_split_bytes.all.current']} "
                f"peak_active={st['active_bytes.all.peak']}\n".encode())
        if step == 0:
            t0 = time.perf_counter()
    print(f"steps_per_second={(args.max_steps - 1) / (time.perf_counter() - t0):.2f}", flush=True)


if __name__ == "__main__":
    main()
