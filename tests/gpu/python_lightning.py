"""Real-GPU check of gpuwatch.lightning (issue 6): a tiny LightningModule trained for 50 steps
on one GPU with GpuWatchCallback(every_n_steps=10) and a CSVLogger. Checks that the CSV log
has the callback's per-step GPU metrics (NVML memory and utilization, this process's
memory, torch's allocator numbers) at steps 10, 20, ... Prints a JSON summary; exits 1
when a check fails. Usage: python3 tests/gpu/python_lightning.py"""
import csv
import json
import os
import sys
import tempfile
import time

import torch

try:
    import lightning.pytorch as pl
    from lightning.pytorch.loggers import CSVLogger
except ImportError:  # the older package name
    import pytorch_lightning as pl
    from pytorch_lightning.loggers import CSVLogger

from gpuwatch.lightning import GpuWatchCallback

EVERY = 10
P = "gpuwatch/"


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                       torch.nn.Linear(2048, 512))

    def training_step(self, batch, batch_idx):
        x, y = batch
        time.sleep(0.02)  # ~1.5 s in all: the callback's sampler (0.2 s) sees the job
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64 * 60, 512), torch.randn(64 * 60, 512))
    loader = torch.utils.data.DataLoader(data, batch_size=64)
    logdir = tempfile.mkdtemp()
    callback = GpuWatchCallback(every_n_steps=EVERY, interval=0.2)
    trainer = pl.Trainer(max_steps=50, accelerator="gpu", devices=1,
                         logger=CSVLogger(logdir, name="gw"), callbacks=[callback],
                         log_every_n_steps=EVERY, enable_progress_bar=False,
                         enable_model_summary=False, enable_checkpointing=False)
    trainer.fit(Tiny(), loader)

    path = os.path.join(trainer.logger.log_dir, "metrics.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    ours = {int(r["step"]): {k: float(v) for k, v in r.items() if k.startswith(P) and v}
            for r in rows if any(k.startswith(P) and v for k, v in r.items())}
    steps = sorted(ours)
    check(set(range(EVERY, 50, EVERY)) <= set(steps), f"steps with gpuwatch metrics: {steps}")
    check(all(s % EVERY == 0 for s in steps), f"logged off the {EVERY}-step grid: {steps}")
    last = ours[steps[-1]] if steps else {}
    gpu = torch.cuda.current_device()
    for key in (f"gpu{gpu}/memory_used_bytes", f"gpu{gpu}/memory_total_bytes",
                f"gpu{gpu}/utilization_gpu_ratio", f"gpu{gpu}/process_used_bytes",
                "torch/allocated", "torch/reserved", "torch/active", "torch/peak_allocated"):
        check(P + key in last, f"{P + key} missing at step {steps[-1] if steps else None}")
    if all(P + k in last for k in ("torch/allocated", "torch/reserved",
                                   f"gpu{gpu}/process_used_bytes")):
        check(0 < last[P + "torch/allocated"] <= last[P + "torch/reserved"],
              "allocated > reserved")
        check(last[P + f"gpu{gpu}/process_used_bytes"] >= last[P + "torch/reserved"],
              "NVML's process memory < torch's reserved")
    print(json.dumps({"csv": path, "steps": steps, "columns": sorted(last), "last": last,
                      "failures": failures}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
