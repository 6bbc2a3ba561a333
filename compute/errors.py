"""Errors of the compute layer. `str(err)` says what went wrong and what to do next."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class ComputeError(Exception):
    """Base of every error the compute layer raises on purpose."""


class JobNotFound(ComputeError):
    """No job with this id in the store."""

    def __init__(self, job_id: str, home: str = "") -> None:
        where = f" in {home}" if home else ""
        super().__init__(
            f"no job {job_id!r}{where}: check the id with `autoresearch jobs list` "
            "(ids look like job-3f9a2c1b7d), or point AUTORESEARCH_HOME at the home that ran it"
        )
        self.job_id = job_id


class DaemonAlreadyRunning(ComputeError):
    """A second daemon was asked to start on a home that already has one."""


class DaemonNotRunning(ComputeError):
    """An operation needed the daemon and none runs (and autostart is off)."""


class StoreLost(ComputeError):
    """The compute store (store.db) lost its tables, or is not a usable SQLite file: refused,
    never recreated empty. The message names the file and what to do."""


def validation_message(what: str, err: ValidationError) -> str:
    """One paragraph naming each bad field, what was given and what is allowed (the CLI prints it;
    the daemon answers a submission it refuses with it: compute/submissions.py)."""
    parts = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(whole)"
        given = f" (got {e['input']!r})" if "input" in e and not isinstance(e["input"], dict) else ""
        parts.append(f"{field}: {e['msg']}{given}")
    return f"invalid {what}: " + "; ".join(parts) + "."
