"""What a reader asks of an outbox (`tracking.outbox`) without opening it as its writer: how many
writes wait and which live process applies them. Imports neither pydantic nor MLflow, so
`autoresearch status` can say it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from compute.pidlock import holder_pid


def writer_lock(path: Path) -> Path:
    """The lock a writer holds while it applies the outbox at `path`."""
    return path.with_name(path.name + ".lock")


def writer_pid(path: Path) -> int | None:
    """The pid of the live writer applying the outbox at `path`, or None."""
    return holder_pid(writer_lock(path))


def pending_writes(path: Path) -> int:
    """Rows waiting in the outbox at `path` (0 when there is no outbox)."""
    if not path.is_file():
        return 0
    db = sqlite3.connect(path, timeout=30.0)
    try:
        return int(db.execute("SELECT count(*) FROM writes").fetchone()[0])
    except sqlite3.OperationalError:  # created, schema not written yet
        return 0
    finally:
        db.close()
