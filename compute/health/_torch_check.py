"""Standalone script the cuda and nccl probes run in a subprocess: never imported by the daemon.

    python _torch_check.py cuda [--size N]
    python _torch_check.py nccl [--size-mb M] [--iters K]

It sees only the node's GPUs (the probe sets CUDA_VISIBLE_DEVICES) and prints one JSON
line: {"skipped": why}, {"devices": [...]} (cuda) or {"world_size", "busbw_gbps",
"correct"} (nccl), or {"error": ...}. A crash or a hang is judged by the probe from the
exit status and its timeout. It imports nothing from this package, so it runs from its path.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from datetime import timedelta


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _torch():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.cuda.is_available():
        return None, "torch has no CUDA device (torch.cuda.is_available() is False)"
    return torch, ""


def cuda(size: int) -> None:
    torch, why = _torch()
    if torch is None:
        return _emit({"skipped": why})
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=gen)
    b = torch.randn(size, size, generator=gen)
    expected = a @ b
    scale = expected.abs().max().item()
    devices = []
    for d in range(torch.cuda.device_count()):
        try:
            dev = torch.device("cuda", d)
            started = time.perf_counter()
            got = (a.to(dev) @ b.to(dev)).cpu()
            torch.cuda.synchronize(dev)
            err = (got - expected).abs().max().item() / scale
            devices.append({"device": d, "rel_err": err, "seconds": time.perf_counter() - started})
        except Exception as exc:  # a broken GPU raises here: report it, try the next one
            text = f"{type(exc).__name__}: {exc}"
            key = "busy" if "out of memory" in text.lower() else "error"  # a job holds its memory
            devices.append({"device": d, key: text.splitlines()[0]})
    _emit({"devices": devices})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nccl_worker(rank: int, world: int, port: int, numel: int, iters: int, out_path: str) -> None:
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    ones = torch.ones(numel, device=f"cuda:{rank}")
    dist.all_reduce(ones)
    torch.cuda.synchronize()
    correct = bool((ones == world).all().item())
    buf = torch.zeros(numel, device=f"cuda:{rank}")
    dist.barrier()
    started = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(buf)
    torch.cuda.synchronize()
    per_op = (time.perf_counter() - started) / iters
    busbw = numel * 4 * 2 * (world - 1) / world / per_op / 1e9
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"world_size": world, "busbw_gbps": busbw, "correct": correct}, f)
    dist.destroy_process_group()


def nccl(size_mb: int, iters: int) -> None:
    torch, why = _torch()
    if torch is None:
        return _emit({"skipped": why})
    import torch.distributed as dist
    import torch.multiprocessing as mp

    world = torch.cuda.device_count()
    if world < 2:
        return _emit({"skipped": f"{world} GPU visible: an all-reduce needs 2 or more"})
    if not dist.is_nccl_available():
        return _emit({"skipped": "torch.distributed was built without NCCL"})
    numel = size_mb * 1024 * 1024 // 4
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "result.json")
        try:
            mp.spawn(_nccl_worker, args=(world, _free_port(), numel, iters, out_path), nprocs=world)
        except Exception as exc:
            return _emit({"error": f"{type(exc).__name__}: {exc}"})
        with open(out_path) as f:
            _emit(json.load(f))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="GPU checks for the autoresearch health probes")
    sub = parser.add_subparsers(dest="check", required=True)
    p_cuda = sub.add_parser("cuda")
    p_cuda.add_argument("--size", type=int, default=1024)
    p_nccl = sub.add_parser("nccl")
    p_nccl.add_argument("--size-mb", type=int, default=64)
    p_nccl.add_argument("--iters", type=int, default=10)
    args = parser.parse_args(argv)
    if args.check == "cuda":
        cuda(args.size)
    else:
        nccl(args.size_mb, args.iters)


if __name__ == "__main__":
    main()
