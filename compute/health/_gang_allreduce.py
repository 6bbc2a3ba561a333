"""Standalone script: the gang preflight one member of a multi-node attempt runs before its argv.

    python _gang_allreduce.py --rank R --world N --addr A --port P --backend nccl|gloo
        --timeout S --result FILE [--fault] -- ARGV...

Never imported by the daemon (it imports nothing from this package, so it runs from its path,
in the job's interpreter). As a wrapper it runs the check in a child process of the same
interpreter, under a hard timeout; if the check passes (or is skipped) it execs ARGV, so the
member's process, its process group and its exit status stay ARGV's. If not, it exits 1.

The check: a rendezvous on a TCPStore hosted by rank 0 at A:P (each rank says it arrived; rank 0
names the ranks that never did), then one all-reduce of `rank + 1` over N ranks with the given
backend (nccl on the member's first GPU, gloo on CPU), compared with N(N+1)/2. With nccl on a
host without nvidia-smi (GPU slots without an NVIDIA driver) or with torch absent, it is
skipped on that member. `--fault` (a fault drill) fails it at once the way a broken NCCL would.

Each outcome is one JSON result file the daemon reads ({"rank", "ok", "skipped", "blame" (the
rank at fault), "message", "backend", "seconds"}) and, unless skipped, one line in the member's
log (`[autoresearch] gang preflight passed|failed on rank R: ...`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import timedelta

MARKER = "[autoresearch] gang preflight"
"""First words of every line this script prints (the daemon's classifier matches `... failed`)."""
NCCL_FAULT = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
              "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details)")
KILL_MARGIN_S = 30.0
"""Beyond --timeout, how long the wrapper waits for a check (its torch import included) before it
kills it as hung."""


class Failed(Exception):
    """The check failed; `blame` is the rank at fault."""

    def __init__(self, message: str, blame: int) -> None:
        super().__init__(message)
        self.blame = blame


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _finish(args: argparse.Namespace, started: float, ok: bool, message: str, blame: int | None = None,
            skipped: bool = False) -> int:
    seconds = round(time.monotonic() - started, 3)
    if not skipped:  # a skip leaves the job's log as it would be without the preflight (the events say it)
        sys.stdout.write(f"{MARKER} {'passed' if ok else 'failed'} on rank {args.rank}: {message}\n")
        sys.stdout.flush()
    result = {"rank": args.rank, "ok": ok, "skipped": skipped, "blame": blame, "message": message,
              "backend": args.backend, "seconds": seconds}
    tmp = f"{args.result}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args.result)
    return 0 if ok else 1


def _rendezvous(dist, args: argparse.Namespace, deadline: float):  # noqa: ANN001 (torch.distributed)
    """Rank 0 hosts the store; every rank sets `arrived/<rank>` and waits for all the others."""
    left = timedelta(seconds=max(1.0, deadline - time.monotonic()))
    try:
        store = dist.TCPStore(args.addr, args.port, args.world, is_master=args.rank == 0, timeout=left,
                              wait_for_workers=False)
    except Exception as exc:  # rank 0 could not listen, or another rank could not reach it
        where = f"{args.addr}:{args.port}"
        if args.rank == 0:
            raise Failed(f"could not host the rendezvous at {where}: {_first_line(exc)}", 0) from None
        raise Failed(f"could not reach rank 0's rendezvous at {where} within {args.timeout:g} s: "
                     f"{_first_line(exc)}", 0) from None
    store.set(f"arrived/{args.rank}", "1")
    keys = [f"arrived/{r}" for r in range(args.world)]
    try:
        store.wait(keys, timedelta(seconds=max(1.0, deadline - time.monotonic())))
    except Exception:
        missing = [r for r in range(args.world) if not store.check([f"arrived/{r}"])] or [0]
        raise Failed(f"rank {missing[0]} never joined the rendezvous within {args.timeout:g} s "
                     f"(missing ranks: {', '.join(map(str, missing))})", missing[0]) from None
    return store


def _all_reduce(torch, dist, store, args: argparse.Namespace, deadline: float) -> str:  # noqa: ANN001
    device = "cpu"
    if args.backend == "nccl":
        torch.cuda.set_device(0)
        device = "cuda:0"
    left = timedelta(seconds=max(1.0, deadline - time.monotonic()))
    try:
        dist.init_process_group(args.backend, store=dist.PrefixStore("pg", store), rank=args.rank,
                                world_size=args.world, timeout=left)
        value = torch.tensor([float(args.rank + 1)], device=device)
        dist.all_reduce(value)
        got = value.item()
    except Exception as exc:
        raise Failed(f"all-reduce ({args.backend}) failed: {_first_line(exc)}", args.rank) from None
    expected = args.world * (args.world + 1) / 2
    if got != expected:
        raise Failed(f"all-reduce ({args.backend}) returned {got:g}, expected {expected:g}: "
                     "wrong data across nodes", args.rank)
    return f"all-reduce ({args.backend}) across {args.world} nodes gave {got:g} as expected"


def check(args: argparse.Namespace) -> int:
    started = time.monotonic()
    if args.fault:
        sys.stdout.write(NCCL_FAULT + "\n")
        return _finish(args, started, False, "injected fault (drill): NCCL all-reduce failed: unhandled "
                       "system error", blame=args.rank)
    if args.backend == "nccl" and shutil.which("nvidia-smi") is None:
        return _finish(args, started, True, "no nvidia-smi on this node (GPU slots without an NVIDIA GPU "
                       "or driver): nothing to all-reduce on", skipped=True)
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return _finish(args, started, True, f"torch is not installed in {sys.executable}", skipped=True)
    deadline = time.monotonic() + args.timeout  # from here: a slow torch import is not the network's fault
    try:
        if args.backend == "nccl" and not torch.cuda.is_available():  # fail before the others wait on it
            raise Failed("torch sees no CUDA device here (torch.cuda.is_available() is False) though "
                         "nvidia-smi is present: a broken driver or CUDA install on this node", args.rank)
        store = _rendezvous(dist, args, deadline)
        message = _all_reduce(torch, dist, store, args, deadline)
        store.add("done", 1)
        if args.rank == 0:  # the store lives in this process: outlast the others' last use of it
            while store.add("done", 0) < args.world and time.monotonic() < deadline:
                time.sleep(0.02)
    except Failed as failed:
        return _finish(args, started, False, str(failed), blame=failed.blame)
    return _finish(args, started, True, f"{message} in {time.monotonic() - started:.2f} s")


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit(f"{MARKER}: expected `-- ARGV...` after the options, got {argv}")
    cut = argv.index("--")
    parser = argparse.ArgumentParser(description="cross-node all-reduce before a gang member's argv")
    for name in ("--rank", "--world", "--port"):
        parser.add_argument(name, type=int, required=True)
    parser.add_argument("--addr", required=True)
    parser.add_argument("--backend", choices=("nccl", "gloo"), required=True)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--fault", action="store_true")
    parser.add_argument("--check", action="store_true", help="run the check itself (the wrapper's child)")
    return parser.parse_args(argv[:cut]), argv[cut + 1:]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args, command = parse(argv)
    if args.check:  # the result is written: exit without tearing down torch's C++ state (gloo may
        code = check(args)  # abort in destroy_process_group, which must not fail a passed check)
        sys.stdout.flush()
        os._exit(code)
    started = time.monotonic()
    child = [sys.executable, os.path.abspath(__file__), "--check", *argv]
    try:
        code = subprocess.run(child, stdin=subprocess.DEVNULL, timeout=args.timeout + KILL_MARGIN_S).returncode
    except subprocess.TimeoutExpired:  # the child is killed by subprocess.run
        sys.exit(_finish(args, started, False, f"the check hung for {args.timeout + KILL_MARGIN_S:g} s and was "
                         "killed (a hung collective or rendezvous)", blame=args.rank))
    if code != 0:
        if not os.path.exists(args.result):
            _finish(args, started, False, f"the check died (exit {code}) without a result", blame=args.rank)
        sys.exit(1)
    if not command:
        sys.exit(0)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        sys.exit(127 if isinstance(exc, FileNotFoundError) else 126)


if __name__ == "__main__":
    main()
