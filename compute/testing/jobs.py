"""Jobs and waits for compute tests: real processes, waited on without asserting timings.

Used by the backend suite (compute/testing/backend_suite.py) and the project's own tests.
"""

from __future__ import annotations

from typing import Any

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from compute.client import Client
from compute.errors import ComputeError
from compute.records import Job
from compute.spec import JobSpec
from compute.states import JobState

T = TypeVar("T")
COUNTER = Path(__file__).parent / "_counter_job.py"
"""A resumable job script: `COUNTER STEPS STEP_SECONDS` (checkpoints on SIGTERM, resumes)."""
TIMEOUT = 60.0
"""Seconds a wait gives up after (a hung test fails with what it waited for)."""


def wait_until(check: Callable[[], T | None], timeout: float = TIMEOUT, what: str = "condition") -> T:
    """Poll `check` until it returns something truthy (returned); AssertionError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def wait_state(client: Client, job_id: str, state: JobState, timeout: float = TIMEOUT) -> Job:
    """The job, once it is in `state`."""
    def reached() -> Job | None:
        job = client.get(job_id)
        return job if job.state == state else None

    return wait_until(reached, timeout, f"{job_id} {state.value}")


def gate_job(gate: Path, **fields: Any) -> JobSpec:
    """A job that runs until the file `gate` exists, then exits 0."""
    script = f'echo waiting; while [ ! -e "{gate}" ]; do sleep 0.05; done'
    return JobSpec(argv=["sh", "-c", script], **fields)


def env_job(**fields: Any) -> JobSpec:
    """A job that prints the variables the backend sets, one `NAME=value` per line."""
    names = ["CUDA_VISIBLE_DEVICES", "AR_JOB_ID", "AR_ATTEMPT", "AR_CHECKPOINT_DIR", "EXTRA"]
    script = "; ".join(f'echo "{n}=${n}"' for n in names)
    return JobSpec(argv=["sh", "-c", script], **fields)


def wait_started(client: Client, job_id: str) -> Job:
    """Wait until the job's command itself runs (it printed its first line)."""
    wait_state(client, job_id, JobState.running)

    return wait_until(lambda: client.get(job_id) if log_so_far(client, job_id).strip() else None,
                      what=f"{job_id} output")


def escaping_job(pids: Path, **fields: Any) -> JobSpec:
    """A job whose attempt 1 leaves its process group twice, as a job that starts a server or a
    daemon does: a `setsid` child and a double-forked (daemonized) grandchild, both ignoring
    SIGTERM; it writes their pids to `pids/*.pid`, prints `ready` and runs until stopped. Later
    attempts exit 0 at once."""
    ignore = "trap '' TERM"
    script = "\n".join([
        '[ "$AR_ATTEMPT" = 1 ] || exit 0',
        f"mkdir -p {pids}",
        f"setsid sh -c \"{ignore}; echo \\$\\$ > {pids}/setsid.pid; exec sleep 600\" &",
        f"setsid sh -c \"({ignore}; exec sleep 600) & echo \\$! > {pids}/daemonized.pid\"",
        f"while [ ! -s {pids}/setsid.pid ] || [ ! -s {pids}/daemonized.pid ]; do sleep 0.05; done",
        "echo ready",
        "while :; do sleep 0.05; done",
    ])
    return JobSpec(argv=["sh", "-c", script], **fields)


def alive_job(pids: Path, **fields: Any) -> JobSpec:
    """A job that prints `alive PID` for each process of `pids/*.pid` (written by `escaping_job`)
    that still runs as it starts, then `checked`."""
    script = (f"for f in {pids}/*.pid; do p=$(cat \"$f\"); "
              "if [ -r /proc/$p/stat ] && [ \"$(sed 's/.*) //' /proc/$p/stat | cut -c1)\" != Z ]; "
              "then echo \"alive $p\"; fi; done; echo checked")
    return JobSpec(argv=["sh", "-c", script], **fields)


def live_pids(pids: Path) -> list[int]:
    """Which processes named in `pids/*.pid` still run (zombies count as gone)."""
    found = [int(f.read_text()) for f in sorted(pids.glob("*.pid"))]
    return [pid for pid in found if _running(pid)]


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :][:1] not in ("Z", "X")


def quick_job(**fields: Any) -> JobSpec:
    """A job that exits 0 at once."""
    return JobSpec(argv=["true"], **fields)


def counter_job(steps: int, step_s: float, **fields: Any) -> JobSpec:
    """The COUNTER job: sums 0..steps-1, `step_s` per step, checkpointing on SIGTERM."""
    return JobSpec(argv=[sys.executable, str(COUNTER), str(steps), str(step_s)], **fields)


def log_so_far(client: Client, job_id: str, attempt: int | None = None) -> str:
    """The log of the job's attempt (default: the latest), or "" before that attempt exists or its
    log does (it is created as the attempt forks): for polling."""
    try:
        return client.log_path(job_id, attempt).read_text()
    except (OSError, ComputeError):  # no such attempt yet, or no log yet
        return ""


def log_text(client: Client, job_id: str, attempt: int | None = None) -> str:
    """The log of the job's attempt (default: the latest)."""
    return client.log_path(job_id, attempt).read_text()
