"""`QueuedTracker`: a `Tracker` whose writes go to an `Outbox` and are applied by one background
thread, in order.

A local SQLite store commits each write with an fsync; on a busy machine one `log_batch`
can take 100 ms, and the runner would otherwise spend that between a job ending and the next
one starting. A write costs the caller one outbox row (`tracking.outbox`; a file outbox keeps it
across a killed process). Reads, `experiment` and `create_run(s)` (they return what the caller
needs) go straight to the inner tracker, so a read may not see writes still queued: call `flush`
first when it must. A write that fails is reported to `on_error` and dropped (the ledger, not
MLflow, is the record of results).

`hold` keeps queued writes waiting (the batch being applied finishes) until `release`, or for at
most `max_hold_s`: the runner holds them while a slot waits for its next job (a job ended ->
its verdict -> the next proposal -> its submit), so MLflow's store and this process's CPU are
the runner's then, and the writes run while it waits for jobs. `wait_released` lets other
background work (spare runs) yield the same way.

Every call on the inner tracker from this process (reads, `create_run(s)`, the writer thread's
batches) takes one lock, `store_turn`: a local SQLite store in its default journal mode lets one
connection write while nobody reads, and two of this process's threads colliding there wait in
SQLite's busy handler, which sleeps in steps of up to 100 ms (three spare runs made while the
writer applied a batch took 65-230 ms each instead of 12).

`close(detach=True)` (the runner's end) applies writes for at most `detach_after_s` more, then
leaves what is still pending to a detached writer process (`tracking.outbox.spawn_writer`)
instead of waiting for it; `close()` applies everything first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tracking.artifacts import ArtifactSource
from tracking.base import CreatesRuns, LoggedMetric, MovesRunStart, RunStatus, RunView, Tracker
from tracking.config import TrackingConfig
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint
from tracking.outbox import Outbox, WriteKind, apply_writes, log_payload, spawn_writer, writer_turn
from tracking.outbox_reads import writer_pid


class QueuedTracker:
    """Wraps a `Tracker`: same interface, writes queued in `outbox` (a file, or in memory) and
    applied on one thread, first in, first out."""

    def __init__(self, inner: Tracker, on_error: Callable[[str], None], *, max_hold_s: float = 1.0,
                 outbox: Path | None = None, detach_after_s: float = 1.0) -> None:  # fmt: skip
        self.inner = inner
        self.on_error = on_error
        self.max_hold_s = max_hold_s
        """Longest a `hold` keeps writes waiting (a holder that never releases only slows them)."""
        self.outbox = Outbox(outbox)
        self.detach_after_s = detach_after_s
        """`close(detach=True)`: how long writes go on being applied here before the rest is left to
        a detached writer (whose start costs seconds: it imports mlflow)."""
        self.store_turn = threading.Lock()
        """Held for each call on `inner` (see the module's text)."""
        self._held_until = 0.0
        self._gate = threading.Condition()
        self._wake = threading.Condition()
        self._stopping = False
        self._dirty = True
        self._idle = threading.Event()
        self.pending_at_close = 0
        """Writes still pending when `close` returned (left to its detached writer)."""
        self._thread = threading.Thread(target=self._work, name="tracker-writer", daemon=True)
        self._thread.start()

    @property
    def config(self) -> TrackingConfig:
        return self.inner.config

    def experiment(self, name: str) -> str:
        with self.store_turn:
            return self.inner.experiment(name)

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        with self.store_turn:
            return self.inner.create_run(experiment_id, name=name, tags=tags)

    @property
    def runs_in_bulk(self) -> bool:
        return isinstance(self.inner, CreatesRuns) and self.inner.runs_in_bulk

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        """The inner tracker's `create_runs` (or one `create_run` each), in one turn on the store."""
        with self.store_turn:
            if isinstance(self.inner, CreatesRuns):
                return self.inner.create_runs(experiment_id, n, name=name, tags=tags)
            return [self.inner.create_run(experiment_id, name=name, tags=tags) for _ in range(n)]

    def get_run(self, run_id: str) -> RunView:
        with self.store_turn:
            return self.inner.get_run(run_id)

    def find_runs(
        self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None, limit: int = 1000
    ) -> list[str]:
        with self.store_turn:
            return self.inner.find_runs(experiment_id, tags, status=status, limit=limit)

    def metric_history(self, run_id: str, key: str) -> list[LoggedMetric]:
        with self.store_turn:
            return self.inner.metric_history(run_id, key)

    def log(
        self,
        run_id: str,
        *,
        metrics: Sequence[MetricPoint] = (),
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        self._put(run_id, WriteKind.log, log_payload(metrics, dict(params or {}), dict(tags or {})))

    def log_text(self, run_id: str, text: str, path: str) -> None:
        self._put(run_id, WriteKind.log_text, {"text": text, "path": path})

    def log_artifact(self, run_id: str, source: ArtifactSource, path: str) -> None:
        """Queued: its files are read when the write is applied."""
        self._put(run_id, WriteKind.log_artifact, {"source": source.model_dump(mode="json"), "path": path})

    def log_datasets(self, run_id: str, datasets: Sequence[DatasetInput]) -> None:
        self._put(run_id, WriteKind.log_datasets, {"datasets": [d.model_dump(mode="json") for d in datasets]})

    def datasets(self, run_id: str) -> list[DatasetInput]:
        with self.store_turn:
            return self.inner.datasets(run_id)

    def set_status(self, run_id: str, status: RunStatus, *, end_time: int | None = None) -> None:
        """Queued with its end time (now, unless given), so the run ends when it did, not when applied."""
        if not status.final:
            raise ValueError(f"set_status ends a run: give FINISHED, FAILED or KILLED, not {status.value}")
        end = int(time.time() * 1000) if end_time is None else end_time
        self._put(run_id, WriteKind.set_status, {"status": status.value, "end_time": end})

    @property
    def moves_run_start(self) -> bool:
        return isinstance(self.inner, MovesRunStart) and self.inner.moves_run_start

    def set_start_time(self, run_id: str, start_time: int) -> None:
        self._put(run_id, WriteKind.set_start, {"start_time": start_time})

    def delete_run(self, run_id: str) -> None:
        self._put(run_id, WriteKind.delete_run, {})

    def hold(self) -> None:
        """Queued writes wait until `release` (at most `max_hold_s` from now)."""
        with self._gate:
            self._held_until = time.monotonic() + self.max_hold_s

    def release(self) -> None:
        """Queued writes go on."""
        with self._gate:
            self._held_until = 0.0
            self._gate.notify_all()

    def wait_released(self) -> None:
        """Return once no `hold` is in force."""
        with self._gate:
            while (left := self._held_until - time.monotonic()) > 0:
                self._gate.wait(left)

    def pending(self) -> int:
        """Writes queued and not applied yet."""
        return self.outbox.pending()

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every queued write is applied (releasing a hold), by this tracker's thread or
        by another writer of the same outbox (a detached one left by an earlier runner), or until
        `timeout_s` passed; returns whether none is pending."""
        self.release()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.outbox.pending():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self._idle.clear()
            with self._wake:
                self._wake.notify_all()
            self._idle.wait(0.05)
        return True

    def close(self, *, detach: bool = False) -> int | None:
        """Stop the thread. `detach` (a file outbox only): writes go on being applied here for at
        most `detach_after_s`, then the batch being applied finishes and what is still pending
        goes to a detached writer, whose pid is returned (None when nothing was left); else every
        write is applied first."""
        if not detach or self.outbox.path is None:
            self.flush()
        elif self.detach_after_s > 0:
            self.flush(self.detach_after_s)
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self.release()
        self._thread.join()
        writer = None
        if self.outbox.path is not None and self.outbox.pending():  # a detached writer applies them
            writer = spawn_writer(self.outbox.path, self.inner.config.tracking_uri) or writer_pid(self.outbox.path)
        self.pending_at_close = self.outbox.pending()
        self.outbox.close()
        return writer

    def _put(self, run_id: str, kind: WriteKind, payload: dict[str, object]) -> None:
        self.outbox.put(run_id, kind, payload)
        with self._wake:
            self._dirty = True
            self._wake.notify_all()

    def _work(self) -> None:
        with writer_turn(self.outbox, stop=lambda: self._stopping) as mine:
            while mine:
                self.wait_released()
                with self._wake:
                    if self._stopping:
                        return  # what is left: `close` hands it to a detached writer
                    self._dirty = False
                batch = self.outbox.take()
                if batch:
                    with self.store_turn:
                        apply_writes(self.inner, batch, self.on_error)
                    self.outbox.done(batch)
                    continue
                self._idle.set()
                with self._wake:
                    if not self._dirty and not self._stopping:
                        self._wake.wait(0.5)
