"""A 1-node x N-GPU DDP smoke check, run under torchrun by benchmarks/gpu_check.sh.

    python -m torch.distributed.run --standalone --nproc-per-node N benchmarks/ddp_smoke.py

Each rank trains a small MLP for 30 steps on its own batches (nccl on its GPU; DDP_SMOKE_BACKEND=gloo
runs it on CPU, for a check without GPUs), then the ranks compare their parameters (they must be
equal: DDP kept them in sync) and time a 64 MB all-reduce. Rank 0 prints one line,
`ddp_smoke: PASS|FAIL world=N backend=B loss A -> B params_in_sync=... busbw_gbps=X`, and every
rank exits 0 on PASS, 1 on FAIL.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = 30
BANDWIDTH_MB = 64


def main() -> int:
    backend = os.environ.get("DDP_SMOKE_BACKEND", "nccl")
    dist.init_process_group(backend, timeout=timedelta(seconds=120))
    rank, world, local = dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[local] if backend == "nccl" else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)
    losses = []
    for _ in range(STEPS):
        x = torch.randn(128, 64, generator=gen).to(device)
        loss = torch.nn.functional.mse_loss(ddp(x), x.sum(dim=1, keepdim=True) * 0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, 0)
    stats = torch.tensor([float(torch.equal(flat, ref)), losses[0], losses[-1]], device=device)
    synced = stats[:1].clone()
    dist.all_reduce(synced, op=dist.ReduceOp.MIN)
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    first, last = stats[1].item() / world, stats[2].item() / world
    buf = torch.ones(BANDWIDTH_MB * 1024 * 1024 // 4, device=device)
    dist.all_reduce(buf)
    dist.barrier()
    started = time.perf_counter()
    for _ in range(5):
        dist.all_reduce(buf)
    if backend == "nccl":
        torch.cuda.synchronize()
    per_op = (time.perf_counter() - started) / 5
    busbw = buf.numel() * 4 * 2 * (world - 1) / world / per_op / 1e9
    ok = bool(synced.item()) and last < first
    if rank == 0:
        print(f"ddp_smoke: {'PASS' if ok else 'FAIL'} world={world} backend={backend} loss {first:.4f} -> "
              f"{last:.4f} params_in_sync={bool(synced.item())} busbw_gbps={busbw:.1f}", flush=True)
    del ddp  # its reducer's threads go before the process group does
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # the verdict is printed; no interpreter teardown of torch's C++ state after it
