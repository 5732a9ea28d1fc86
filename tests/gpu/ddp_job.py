"""A small DistributedDataParallel job for gpuwatch's multi-GPU checks (issue 19),
started by torchrun: `torchrun --nproc_per_node=N ddp_job.py [--steps S] [--leak-rank R]`.

Each rank trains an MLP built in code (4096 -> 8192 -> 4096, AdamW) on CUDA device
LOCAL_RANK % device_count, reports its allocator's memory every 5 steps to `gpuwatch run`
over GPUWATCH_SOCKET (gpuwatch.torch.TorchMonitor), and rank R keeps --leak-mib MiB every
step. The backend is NCCL when every rank has a GPU of its own, else gloo (NCCL refuses two
ranks on one GPU), so the job also runs with more ranks than GPUs. A fixed number of steps,
so every rank makes the same collective calls. Each rank prints one line at the end:
`rank 1 pid 4242 cuda:0 uuid 8f0c... backend gloo steps 480 kept 7680 MiB`.
NVLink multicast stays off (the multi-GPU machines' rule): NCCL_NVLS_ENABLE=0 is set here
too, in case the launcher's environment lost it.
"""
import argparse
import os
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from gpuwatch.torch import TorchMonitor  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=480)
    p.add_argument("--step-seconds", type=float, default=0.25)
    p.add_argument("--leak-rank", type=int, default=-1)
    p.add_argument("--leak-mib", type=int, default=16)
    a = p.parse_args()

    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"]))
    gpus = torch.cuda.device_count()
    device = local % gpus
    torch.cuda.set_device(device)
    backend = "nccl" if local_world <= gpus else "gloo"
    dist.init_process_group(backend)

    net = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.ReLU(),
                              torch.nn.Linear(8192, 4096)).cuda(device)
    model = DistributedDataParallel(net, device_ids=[device])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    monitor = TorchMonitor(every_n_steps=5)
    kept = []
    for _ in range(a.steps):
        started = time.monotonic()
        x = torch.randn(256, 4096, device=device)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if rank == a.leak_rank:
            kept.append(torch.empty(a.leak_mib << 20, dtype=torch.uint8, device=device))
        torch.cuda.synchronize(device)
        monitor.step()
        time.sleep(max(0.0, a.step_seconds - (time.monotonic() - started)))
    uuid = getattr(torch.cuda.get_device_properties(device), "uuid", "")
    print(f"rank {rank} pid {os.getpid()} cuda:{device} uuid {uuid} backend {backend} "
          f"steps {a.steps} kept {len(kept) * a.leak_mib} MiB", flush=True)
    monitor.close()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
