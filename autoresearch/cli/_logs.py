"""`jobs logs` and the reason column, on a job as its JSON view (`compute.reads.job_views`, or a
`Job`'s `model_dump(mode="json")`): shared by the typer command and the fast path, without
typer, rich or pydantic."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from autoresearch.cli._plain import BadInput


def reason(job: dict[str, Any]) -> str:
    """A pending job's waiting reason (with its place in the queue), else its state reason."""
    if job["state"] == "pending" and job["waiting_reason"]:
        return f"{job['waiting_reason']} (queue position {job['queue_position']})"
    return str(job["state_reason"])


def check_attempt(job: dict[str, Any], attempt: int | None, rank: int = 0) -> None:
    if attempt is not None and not any(a["number"] == attempt for a in job["attempts"]):
        raise BadInput(f"job {job['id']} has {len(job['attempts'])} attempt(s); there is no attempt {attempt}")
    nodes = job["spec"]["resources"].get("nodes", 1)
    if not 0 <= rank < nodes:
        raise BadInput(f"job {job['id']} spans {nodes} node(s): --rank must be 0-{nodes - 1}, not {rank}")


def not_started(job: dict[str, Any]) -> str:
    """What `jobs logs` says (on stderr, exit 0) for a job with no attempt yet."""
    return (f"job {job['id']} has not started ({job['state']}: {reason(job)}): no log yet; "
            "use --follow to wait for it")


def log_path(job: dict[str, Any], number: int, rank: int = 0) -> Path:
    """The log of attempt `number`: its gang member `rank`'s for a multi-node job."""
    found = next(a for a in job["attempts"] if a["number"] == number)
    return Path(found["members"][rank]["log_path"] if found.get("members") else found["log_path"])


def log_view(job: dict[str, Any], attempt: int | None, tail: int | None, rank: int = 0) -> dict[str, object]:
    """What `jobs logs --json` prints."""
    number = attempt or (job["attempts"][-1]["number"] if job["attempts"] else None)
    path = log_path(job, number, rank) if number is not None else None
    text = ""
    if path is not None and os.path.isfile(path):
        with open(path, "rb") as fh:
            text = fh.read().decode(errors="replace")
        if tail is not None:
            text = "".join(text.splitlines(keepends=True)[-tail:]) if tail else ""
    return {"job_id": job["id"], "state": job["state"], "attempt": number, "rank": rank,
            "log_path": None if path is None else str(path), "text": text, "waiting_reason": job["waiting_reason"]}


def print_file(path: Path, tail: int | None, offset: int) -> int:
    """Print the file from `offset` (its last `tail` lines only, if given); the new offset."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return offset
    text = data.decode(errors="replace")
    if tail is not None:
        text = "".join(text.splitlines(keepends=True)[-tail:]) if tail else ""
    sys.stdout.write(text)
    sys.stdout.flush()
    return offset + len(data)
