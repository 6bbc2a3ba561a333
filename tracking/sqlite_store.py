"""A new local SQLite MLflow store is created whole or not at all.

MLflow builds a new store's schema in place (~3 s, dozens of statements): a process killed
meanwhile leaves a half-made file that fails for good (`table spans already exists`). Here the
schema is built in a temporary file beside the store, under an exclusive lock, and renamed into
place; a killed creator leaves only its temporary file, which the next one replaces.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def ensure_sqlite_store(db: Path, artifact_root: str | None) -> None:
    """Create the MLflow store `db` (schema and all) if it does not exist yet; else do nothing."""
    if _made(db):
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(f"{db.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _made(db):
            return  # another process made it while this one waited
        for stale in db.parent.glob(f".{db.name}.creating-*"):
            stale.unlink(missing_ok=True)  # left by a creator that was killed (we hold the lock)
        partial = db.with_name(f".{db.name}.creating-{os.getpid()}")
        from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        store = SqlAlchemyStore(f"sqlite:///{partial}", artifact_root or DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)
        store.engine.dispose()
        os.replace(partial, db)


def _made(db: Path) -> bool:
    try:
        return db.stat().st_size > 0
    except FileNotFoundError:
        return False
