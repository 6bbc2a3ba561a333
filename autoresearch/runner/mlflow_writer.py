"""MLflow writes off the runner's critical path: one background thread applies them in order.

A local SQLite store commits each write with an fsync; on a busy machine one `log_batch`
can take 100 ms, and the runner would otherwise spend that between a job ending and the next
one starting. Reads stay synchronous. A write that fails is reported and dropped (the ledger,
not MLflow, is the record of results). A runner killed with writes still queued leaves some
runs RUNNING; `Evaluator.reconcile` finishes them at the next start.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

_STOP = object()


class MlflowWriter:
    """Applies queued calls on one thread, first in, first out."""

    def __init__(self, on_error: Callable[[str], None]) -> None:
        self.on_error = on_error
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="mlflow-writer", daemon=True)
        self._thread.start()

    def submit(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Queue `call(*args, **kwargs)`."""
        self._queue.put((call, args, kwargs))

    def flush(self) -> None:
        """Wait until every queued write is applied."""
        self._queue.join()

    def close(self) -> None:
        """Apply what is queued, then stop the thread."""
        self._queue.put(_STOP)
        self._thread.join()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                call, args, kwargs = item
                try:
                    call(*args, **kwargs)
                except Exception as exc:  # noqa: BLE001 - reported, never fatal to the campaign
                    self.on_error(f"MLflow write {getattr(call, '__name__', call)} failed: {exc}")
            finally:
                self._queue.task_done()
