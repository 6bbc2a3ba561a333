"""A tiny data-parallel training job for the gang tests: run under `torchrun` (gloo, CPU).

Every step draws its batch from a seed of (step, rank), so the loss curve is a function of the
step alone. On SIGTERM the ranks agree (an all-reduce of the flag) to stop at the same step;
rank 0 saves model, optimizer and step to $AR_CHECKPOINT_DIR/ckpt.pt, and the next attempt
resumes from there. Rank 0 prints `step N loss: X` per step and `final_loss: X` at the end.
Each process writes its pid to $AR_CHECKPOINT_DIR/pids/<node rank>-<local rank>.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("DDP_STEPS", "30"))
STEP_S = float(os.environ.get("DDP_STEP_S", "0.2"))

stop = False


def on_term(*_: object) -> None:
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
ckpt_dir = Path(os.environ["AR_CHECKPOINT_DIR"])
(ckpt_dir / "pids").mkdir(parents=True, exist_ok=True)
(ckpt_dir / "pids" / f"{os.environ['AR_NODE_RANK']}-{os.environ['LOCAL_RANK']}").write_text(str(os.getpid()))

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
ddp = DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
ckpt, start = ckpt_dir / "ckpt.pt", 0
if ckpt.exists():
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    if rank == 0:
        print(f"resumed at step {start}", flush=True)

for step in range(start, STEPS):
    flag = torch.tensor([1.0 if stop else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item() > 0:
        if rank == 0:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ckpt)
            print(f"checkpointed at step {step}", flush=True)
        dist.barrier()
        dist.destroy_process_group()
        sys.exit(0)
    g = torch.Generator().manual_seed(step * 1000 + rank)
    x = torch.randn(16, 8, generator=g)
    loss = ((ddp(x) - x.sum(1, keepdim=True)) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    mean = loss.detach().clone()
    dist.all_reduce(mean)
    if rank == 0:
        print(f"step {step} loss: {mean.item() / world:.8f}", flush=True)
    time.sleep(STEP_S)

if rank == 0:
    print(f"final_loss: {mean.item() / world:.8f}", flush=True)
dist.destroy_process_group()
