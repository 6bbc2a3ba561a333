"""`Outbox`: a durable first-in first-out queue of tracking writes in one SQLite file.

The runner's MLflow writes go here first (one small WAL commit, no fsync, well under a
millisecond) and are applied to the store by one writer: the runner's own writer thread while it
runs (`QueuedTracker`), then, for what is still pending when it ends, a detached writer process
(`spawn_writer`, `python -m tracking.outbox_writer`) that outlives it. A runner killed with SIGKILL
loses nothing: its writes are committed rows, applied by the next writer.

Rules:

- One writer at a time: a writer holds `<outbox>.lock` (an fcntl lock the kernel drops when the
  holder dies) while it applies rows; a second one waits for it.
- A row is deleted only after it was applied, in the same order per run. A writer killed between
  the two applies the row again: every write is idempotent. Metric points carry the timestamp
  taken when they were queued, so a point applied twice is the same (key, step, timestamp, value)
  and MLflow keeps it once (its primary key); tags and run status overwrite; a param is
  written again with the same value; an artifact is overwritten; a dataset input is kept once;
  a run's end and start times carry the time the write was queued (or given).
- A write that the store refuses is reported (`on_error`) and dropped, as before the outbox:
  the trial ledger, not MLflow, is the record of results.
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute.pidlock import release, try_lock
from pydantic import TypeAdapter

from tracking.artifacts import ArtifactSource
from tracking.base import MovesRunStart, RunStatus, Tracker
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint
from tracking.mlflow_tracker import MlflowTracker
from tracking.outbox_reads import pending_writes, writer_lock, writer_pid
from tracking.sqlite_bulk import SqliteBulk

_SCHEMA = "CREATE TABLE IF NOT EXISTS writes (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, " \
          "kind TEXT NOT NULL, payload TEXT NOT NULL)"  # fmt: skip


class WriteKind(str, enum.Enum):
    """Which `Tracker` write a row replays."""

    log = "log"
    log_text = "log_text"
    log_datasets = "log_datasets"
    log_artifact = "log_artifact"
    set_status = "set_status"
    set_start = "set_start"
    delete_run = "delete_run"


@dataclass(frozen=True)
class Write:
    """One queued write."""

    id: int
    """Its row id (first in, first out)."""
    run_id: str
    kind: WriteKind
    payload: dict[str, Any]
    """The call's arguments, as JSON (metric points with the timestamp they were queued at)."""


class Outbox:
    """The queue of one tracker's writes in the SQLite file `path` (None: in memory, for this
    process only: tests, throwaway trackers); thread-safe."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        """The outbox file (None for an in-memory one)."""
        self._lock = threading.Lock()
        where = ":memory:" if path is None else str(path)
        self._db = sqlite3.connect(where, check_same_thread=False, isolation_level=None, timeout=30.0)
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")  # a commit survives a killed process
            self._db.execute("PRAGMA synchronous=NORMAL")  # without an fsync per write
        self._db.execute(_SCHEMA)

    @property
    def lock_path(self) -> Path | None:
        """Held by the writer applying this outbox's rows."""
        return None if self.path is None else writer_lock(self.path)

    def put(self, run_id: str, kind: WriteKind, payload: dict[str, Any]) -> None:
        text = json.dumps(payload)
        with self._lock:
            self._db.execute("INSERT INTO writes (run_id, kind, payload) VALUES (?, ?, ?)", (run_id, kind.value, text))

    def take(self, limit: int = 500) -> list[Write]:
        """The oldest `limit` rows (left in place until `done`)."""
        with self._lock:
            rows = self._db.execute("SELECT id, run_id, kind, payload FROM writes ORDER BY id LIMIT ?", (limit,))
            return [Write(i, run, WriteKind(kind), json.loads(payload)) for i, run, kind, payload in rows.fetchall()]

    def done(self, writes: Sequence[Write]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM writes WHERE id = ?", [(w.id,) for w in writes])

    def pending(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM writes").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def log_payload(metrics: Sequence[MetricPoint], params: dict[str, str] | None, tags: dict[str, str] | None
                ) -> dict[str, Any]:  # fmt: skip
    """A `log` row: each point stamped now unless it has a timestamp (the key that makes a replay harmless)."""
    now = int(time.time() * 1000)
    points = [[p.key, p.value, p.step, p.timestamp if p.timestamp is not None else now] for p in metrics]
    return {"metrics": points, "params": params or {}, "tags": tags or {}}


def apply_writes(tracker: Tracker, writes: Sequence[Write], on_error: Callable[[str], None]) -> None:
    """Apply `writes` to `tracker`, run by run in their order, adjacent `log` rows of a run merged
    into one batch (a run's whole backlog is then a `log_batch` and a status update). On a local
    MLflow SQLite store the `log` and `set_status` calls of every run go in one transaction
    (`SqliteBulk`), before the other calls of the batch."""
    by_run: dict[str, list[Write]] = {}
    for write in writes:
        by_run.setdefault(write.run_id, []).append(write)
    calls = [(run_id, kind, payload) for run_id, run_writes in by_run.items() for kind, payload in _merged(run_writes)]
    bulk = _bulk_for(tracker)
    if bulk is not None:
        ops = [(run_id, kind.value, payload) for run_id, kind, payload in calls if kind in _BULK]
        try:
            for error in bulk.apply(ops):
                on_error(f"tracking write {error} (dropped)")
            calls = [call for call in calls if call[1] not in _BULK]
        except Exception as exc:  # noqa: BLE001 - one call at a time through MLflow, as without it
            on_error(f"tracking: one transaction for {len(ops)} writes failed ({exc}); applying them one by one")
    for run_id, kind, payload in calls:
        try:
            _call(tracker, run_id, kind, payload)
        except Exception as exc:  # noqa: BLE001 - reported, never fatal to the campaign
            on_error(f"tracking write {kind.value} to run {run_id} failed (dropped): {exc}")


_BULK = (WriteKind.log, WriteKind.set_status, WriteKind.set_start)
_ARTIFACT: TypeAdapter[ArtifactSource] = TypeAdapter(ArtifactSource)


def _bulk_for(tracker: Tracker) -> SqliteBulk | None:
    return SqliteBulk.of(tracker.config.tracking_uri) if isinstance(tracker, MlflowTracker) else None


def _merged(writes: Sequence[Write]) -> Iterator[tuple[WriteKind, dict[str, Any]]]:
    pending: dict[str, Any] | None = None
    for write in writes:
        if write.kind is WriteKind.log:
            if pending is None:
                pending = {"metrics": [], "params": {}, "tags": {}}
            pending["metrics"] += write.payload["metrics"]
            pending["params"].update(write.payload["params"])
            pending["tags"].update(write.payload["tags"])
            continue
        if pending is not None:
            yield WriteKind.log, pending
            pending = None
        yield write.kind, write.payload
    if pending is not None:
        yield WriteKind.log, pending


def _call(tracker: Tracker, run_id: str, kind: WriteKind, payload: dict[str, Any]) -> None:
    if kind is WriteKind.log:
        points = [MetricPoint(key=k, value=v, step=s, timestamp=t) for k, v, s, t in payload["metrics"]]
        tracker.log(run_id, metrics=points, params=payload["params"], tags=payload["tags"])
    elif kind is WriteKind.log_text:
        tracker.log_text(run_id, payload["text"], payload["path"])
    elif kind is WriteKind.log_datasets:
        tracker.log_datasets(run_id, [DatasetInput.model_validate(d) for d in payload["datasets"]])
    elif kind is WriteKind.log_artifact:
        tracker.log_artifact(run_id, _ARTIFACT.validate_python(payload["source"]), payload["path"])
    elif kind is WriteKind.set_status:
        tracker.set_status(run_id, RunStatus(payload["status"]), end_time=payload.get("end_time"))
    elif kind is WriteKind.set_start:
        if isinstance(tracker, MovesRunStart) and tracker.moves_run_start:
            tracker.set_start_time(run_id, payload["start_time"])
    else:
        tracker.delete_run(run_id)


@contextmanager
def writer_turn(outbox: Outbox, stop: Callable[[], bool] = lambda: False, *, held_fd: int | None = None
                ) -> Iterator[bool]:  # fmt: skip
    """Hold the outbox's writer lock (waiting for another writer to finish); yields False when
    `stop()` turned true first. `held_fd`: the lock, taken already (by `spawn_writer`). An
    in-memory outbox has no other writer."""
    if outbox.lock_path is None:
        yield True
        return
    fd = held_fd
    if fd is not None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    while fd is None and (fd := try_lock(outbox.lock_path)) is None:
        if stop():
            yield False
            return
        time.sleep(0.05)
    try:
        yield True
    finally:
        release(fd)


def drain_outbox(outbox: Outbox, tracker: Tracker, on_error: Callable[[str], None]) -> int:
    """Apply every row until the outbox is empty (the caller holds the writer turn); rows applied."""
    applied = 0
    while batch := outbox.take():
        apply_writes(tracker, batch, on_error)
        outbox.done(batch)
        applied += len(batch)
    return applied


def wait_drained(path: Path, timeout_s: float | None = None) -> int:
    """Wait until the outbox at `path` is empty, or no writer is applying it (then the next one
    applies the rest), or `timeout_s` passed; returns the writes still pending."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while (left := pending_writes(path)) and writer_pid(path) is not None:
        if deadline is not None and time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return left


def spawn_writer(path: Path, tracking_uri: str) -> int | None:
    """Start a detached writer that applies what is pending at `path` to `tracking_uri` and exits
    once the outbox is empty (its output goes to `<outbox>.log`); returns its pid. The writer's lock
    is taken here and handed to it, so the outbox is never without a writer in between. None: a
    writer holds the outbox already (it applies these writes too)."""
    fd = try_lock(writer_lock(path))
    if fd is None:
        return None
    log = open(path.with_name(path.name + ".log"), "ab")  # noqa: SIM115 - handed to the child
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "tracking.outbox_writer", str(path), tracking_uri, str(fd)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env=os.environ.copy(), pass_fds=(fd,),
        )  # fmt: skip
    finally:
        log.close()
        os.close(fd)  # the child's copy holds the lock now
    return child.pid
