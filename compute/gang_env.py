"""What one member of a gang (a multi-node job) gets: its variables, and its argv under torchrun.

Every member gets AR_NNODES, AR_NODE_RANK, AR_GPUS_PER_NODE, MASTER_ADDR and MASTER_PORT (a
port free on rank 0's node, chosen per attempt) beside the usual CUDA_VISIBLE_DEVICES and the
shared AR_CHECKPOINT_DIR (compute/attempt_command.py). With `launcher: torchrun` the argv runs
as `torchrun --nnodes N --node-rank R --nproc-per-node G --master-addr A --master-port P
--no-python -- <argv>`: torchrun starts G processes, each running the argv as given (so a
`python train.py` keeps its interpreter) with RANK, LOCAL_RANK and WORLD_SIZE set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from compute.backends.base import LaunchError
from compute.jobenv import AR_GPUS_PER_NODE, AR_NNODES, AR_NODE_RANK, MASTER_ADDR, MASTER_PORT
from compute.spec import JobSpec, Launcher


def gang_env(nnodes: int, rank: int, gpus_per_node: int, master: tuple[str, int]) -> dict[str, str]:
    """The variables that wire one member to its gang."""
    return {
        AR_NNODES.name: str(nnodes),
        AR_NODE_RANK.name: str(rank),
        AR_GPUS_PER_NODE.name: str(gpus_per_node),
        MASTER_ADDR.name: master[0],
        MASTER_PORT.name: str(master[1]),
    }


def job_python(argv: list[str], path: str | None) -> str | None:
    """The job's interpreter: argv[0] when it is a python (found on the job's PATH), else None."""
    first = argv[0]
    return (shutil.which(first, path=path) or first) if Path(first).name.startswith("python") else None


def find_torchrun(argv: list[str], path: str | None) -> str:
    """The torchrun next to the job's python (argv[0]), else the one on the job's PATH."""
    first = argv[0]
    if (exe := job_python(argv, path)) is not None:
        beside = Path(exe).parent / "torchrun"
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
    found = shutil.which("torchrun", path=path)
    if found is None:
        raise LaunchError(
            f"launcher torchrun: no torchrun next to {first} nor on the job's PATH ({path or 'unset'}); "
            "install torch where the job runs (pip install torch), or submit with --launcher none"
        )
    return found


def member_argv(spec: JobSpec, argv: list[str], rank: int, master: tuple[str, int], path: str | None) -> list[str]:
    """The argv one member runs: `argv` itself, or wrapped in torchrun for `launcher: torchrun`."""
    if spec.launcher is Launcher.none:
        return argv
    res = spec.resources
    return [
        find_torchrun(argv, path), "--nnodes", str(res.nodes), "--node-rank", str(rank),
        "--nproc-per-node", str(max(1, res.gpus)), "--master-addr", master[0], "--master-port", str(master[1]),
        "--no-python", "--", *argv,
    ]
