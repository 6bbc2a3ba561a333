"""`QueuedTracker`: a `Tracker` whose writes run on one background thread, in order.

A local SQLite store commits each write with an fsync; on a busy machine one `log_batch`
can take 100 ms, and the runner would otherwise spend that between a job ending and the next
one starting. Reads, `experiment` and `create_run` (they return what the caller needs) go
straight to the inner tracker, so a read may not see writes still queued: call `flush` first
when it must. A write that fails is reported to `on_error` and dropped (the ledger, not
MLflow, is the record of results). A process killed with writes still queued leaves some
runs RUNNING; the runner's `Evaluator.reconcile` finishes them at the next start.

`hold` keeps queued writes waiting (the one being applied finishes) until `release`, or for at
most `max_hold_s`: the runner holds them while a slot waits for its next job (a job ended ->
its verdict -> the next proposal -> its submit), so MLflow's store and this process's CPU are
the runner's then, and the writes run while it waits for jobs. `wait_released` lets other
background work (spare runs) yield the same way.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tracking.base import LoggedMetric, RunStatus, RunView, Tracker
from tracking.config import TrackingConfig
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint

_STOP = object()


class QueuedTracker:
    """Wraps a `Tracker`: same interface, writes applied on one thread, first in, first out."""

    def __init__(self, inner: Tracker, on_error: Callable[[str], None], *, max_hold_s: float = 1.0) -> None:
        self.inner = inner
        self.on_error = on_error
        self.max_hold_s = max_hold_s
        """Longest a `hold` keeps writes waiting (a holder that never releases only slows them)."""
        self._held_until = 0.0
        self._gate = threading.Condition()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="tracker-writer", daemon=True)
        self._thread.start()

    @property
    def config(self) -> TrackingConfig:
        return self.inner.config

    def experiment(self, name: str) -> str:
        return self.inner.experiment(name)

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        return self.inner.create_run(experiment_id, name=name, tags=tags)

    def get_run(self, run_id: str) -> RunView:
        return self.inner.get_run(run_id)

    def find_runs(
        self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None, limit: int = 1000
    ) -> list[str]:
        return self.inner.find_runs(experiment_id, tags, status=status, limit=limit)

    def metric_history(self, run_id: str, key: str) -> list[LoggedMetric]:
        return self.inner.metric_history(run_id, key)

    def log(
        self,
        run_id: str,
        *,
        metrics: Sequence[MetricPoint] = (),
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        self._submit(self.inner.log, run_id, metrics=list(metrics), params=params, tags=tags)

    def log_text(self, run_id: str, text: str, path: str) -> None:
        self._submit(self.inner.log_text, run_id, text, path)

    def log_datasets(self, run_id: str, datasets: Sequence[DatasetInput]) -> None:
        self._submit(self.inner.log_datasets, run_id, list(datasets))

    def datasets(self, run_id: str) -> list[DatasetInput]:
        return self.inner.datasets(run_id)

    def set_status(self, run_id: str, status: RunStatus) -> None:
        self._submit(self.inner.set_status, run_id, status)

    def delete_run(self, run_id: str) -> None:
        self._submit(self.inner.delete_run, run_id)

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

    def flush(self) -> None:
        """Wait until every queued write is applied (releasing a hold)."""
        self.release()
        self._queue.join()

    def close(self) -> None:
        """Apply what is queued, then stop the thread."""
        self.release()
        self._queue.put(_STOP)
        self._thread.join()

    def _submit(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._queue.put((call, args, kwargs))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                call, args, kwargs = item
                self.wait_released()
                try:
                    call(*args, **kwargs)
                except Exception as exc:  # noqa: BLE001 - reported, never fatal to the campaign
                    self.on_error(f"tracking write {getattr(call, '__name__', call)} failed: {exc}")
            finally:
                self._queue.task_done()
