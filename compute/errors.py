"""Errors of the compute layer. `str(err)` says what went wrong and what to do next."""

from __future__ import annotations

import enum
import sqlite3
from pathlib import Path
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


class StoreTrouble(str, enum.Enum):
    """Why an SQLite file could not be read or written just now (from SQLite's error code, not its text)."""

    full = "full"
    """SQLITE_FULL: the disk (or quota) holding it is full."""
    locked = "locked"
    """SQLITE_BUSY / SQLITE_LOCKED: another process held its lock past the busy timeout."""
    read_only = "read_only"
    """SQLITE_READONLY: the file or its folder cannot be written."""
    io = "io"
    """SQLITE_IOERR: the operating system refused a read or write."""


_TROUBLE = {13: StoreTrouble.full, 5: StoreTrouble.locked, 6: StoreTrouble.locked, 8: StoreTrouble.read_only,
            10: StoreTrouble.io}  # fmt: skip


class StoreUnavailable(ComputeError):
    """A store (or any SQLite file of ours) could not be read or written just now; nothing was
    changed. `trouble` says why (data); the message names the file and what to do."""

    def __init__(self, path: Path, trouble: StoreTrouble, detail: str) -> None:
        advice = {
            StoreTrouble.full: f"the disk holding it is full. Free space on that filesystem (`df -h {path.parent}`), "
                               "then run the command again; a daemon waits and recovers by itself once there is room",
            StoreTrouble.locked: f"another process held its lock too long. Find it with `fuser -v {path}` (a "
                                 "`sqlite3` shell in a transaction, a backup?), end it, then run the command again",
            StoreTrouble.read_only: f"it cannot be written. Check the permissions of {path} and its folder, and that "
                                    "the filesystem is not mounted read-only",
            StoreTrouble.io: "the operating system refused a read or write. Check the disk (`dmesg`, free space), "
                             "then run the command again",
        }[trouble]  # fmt: skip
        super().__init__(f"{path}: {advice} (SQLite: {detail}). Nothing was changed.")
        self.path = path
        self.trouble = trouble


CORRUPT_CODES = frozenset({11, 26})
"""SQLITE_CORRUPT and SQLITE_NOTADB: a file that is not (or no longer) a database."""


def sqlite_cause(exc: BaseException) -> sqlite3.Error | None:
    """The sqlite3 error in `exc` or what caused it (SQLAlchemy keeps it as `orig`; Optuna and
    MLflow raise their own errors from SQLAlchemy's), or None."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        found = seen if isinstance(seen, sqlite3.Error) else getattr(seen, "orig", None)
        if isinstance(found, sqlite3.Error):
            return found
        seen = seen.__cause__ or seen.__context__
    return None


def corrupt_cause(exc: BaseException) -> sqlite3.Error | None:
    """The SQLite error saying a file is corrupt or not a database, in `exc` or what caused it."""
    found = sqlite_cause(exc)
    code = getattr(found, "sqlite_errorcode", None)
    return found if code is not None and code & 0xFF in CORRUPT_CODES else None


def sqlite_trouble(exc: BaseException) -> StoreTrouble | None:
    """The trouble the sqlite3 error in `exc` (or what caused it) says, by SQLite's primary error
    code: a full disk, a lock held too long, a read-only file or an I/O error; None for anything else."""
    code = getattr(sqlite_cause(exc), "sqlite_errorcode", None)
    return None if code is None else _TROUBLE.get(code & 0xFF)


def store_unavailable(exc: sqlite3.Error, path: Path) -> StoreUnavailable | None:
    """`exc` as a `StoreUnavailable` when it is a full disk, a lock held too long, a read-only file or
    an I/O error (`sqlite_trouble`); None for anything else (a bug, a corrupt file)."""
    trouble = sqlite_trouble(exc)
    return None if trouble is None else StoreUnavailable(path, trouble, str(exc))


def validation_message(what: str, err: ValidationError) -> str:
    """One paragraph naming each bad field, what was given and what is allowed (the CLI prints it;
    the daemon answers a submission it refuses with it: compute/submissions.py)."""
    parts = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(whole)"
        given = f" (got {e['input']!r})" if "input" in e and not isinstance(e["input"], dict) else ""
        parts.append(f"{field}: {e['msg']}{given}")
    return f"invalid {what}: " + "; ".join(parts) + "."
