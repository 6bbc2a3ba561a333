"""`RunPool`: spare MLflow runs of one campaign, made ahead of need on a background thread.

A trial's job gets `MLFLOW_RUN_ID`, so its run must exist before the job is submitted; creating
it then (several SQLite commits) sat between a job's end and the next job's start. The pool keeps
up to `size` spare runs made in advance, so a launch takes one and names it with a queued write.

Rules:

- A spare is a RUNNING run of the campaign's experiment tagged with the campaign, its start
  (`CAMPAIGN_STARTED_TAG`) and `SPARE_TAG` = `true`, and no trial. `take` hands one out; the
  launcher records it in the ledger and then tags it (trial, run name, `SPARE_TAG` = `false`).
- Nothing is lost on a crash: spares left by a killed runner are taken over by the next runner
  of the campaign, except those a trial of the ledger already records (taken, tags still queued).
  (`left_behind=False`: the campaign has just started, no runner came before; nothing to look for.)
- A spare's recorded start is when it was made; its trial's job moves it (`run_record`).
- `close` deletes the spares not handed out (before the tracker closes: the deletes are queued).
- `take` waits only for a spare being made (the pool is past its turn and inside `create_run(s)`):
  that one is ready sooner than a run the caller would make beside it. Otherwise, with no spare
  ready it returns None and the caller creates the run itself.
  At most `limit` spares are ever made (the trials left in the budget when the runner started).
- Where the tracker makes runs in bulk (`CreatesRuns.runs_in_bulk`: a local SQLite store, one
  transaction: ~6 ms of CPU for four runs, where MLflow's client spends 12-15 ms on each), the
  pool waits until half its spares are taken, then makes all it lacks at once,
  `min(size - ready, spares left to make)` (a batch of one run costs 4 ms); elsewhere (an http
  store) one at a time as soon as one is taken, so the first is ready after one `create_run`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping

from tracking import SPARE_TAG, CreatesRuns, RunStatus, Tracker


class RunPool:
    """Spare runs for one campaign's launches (take from the runner's thread only)."""

    def __init__(
        self,
        tracker: Tracker,
        experiment_id: str,
        tags: Mapping[str, str],
        *,
        size: int,
        limit: int,
        recorded: set[str],
        left_behind: bool = True,
        on_error: Callable[[str], None],
        wait_turn: Callable[[], None] = lambda: None,
    ) -> None:
        self.tracker = tracker
        self.wait_turn = wait_turn
        """Called before each spare is made (`QueuedTracker.wait_released`: not while a slot waits)."""
        self.experiment_id = experiment_id
        self.tags = {**tags, SPARE_TAG: "true"}
        """Every spare's tags (campaign, campaign start, spare)."""
        self.size = size
        self.on_error = on_error
        left = tracker.find_runs(experiment_id, self.tags, status=RunStatus.RUNNING) if left_behind else []
        self._ready: deque[str] = deque(run for run in left if run not in recorded)
        self._to_make = max(0, limit - len(self._ready))
        self._wake = threading.Condition()
        self._closed = False
        self._making = False
        """Spares are being made (their `create_run(s)` started)."""
        self._bulk = tracker if isinstance(tracker, CreatesRuns) and tracker.runs_in_bulk else None
        """Makes several spares in one call (else one `create_run` each)."""
        self._refill_at = size // 2 if self._bulk is not None else size - 1
        """Spares are made once no more than this many are ready."""
        self._thread = threading.Thread(target=self._work, name="run-pool", daemon=True)
        self._thread.start()

    def take(self) -> str | None:
        """A spare run's id, or None when none is ready nor being made (then create the run at once)."""
        with self._wake:
            while not self._ready and self._making:
                self._wake.wait()
            run_id = self._ready.popleft() if self._ready else None
            self._wake.notify()
        return run_id

    def close(self) -> None:
        """Stop making spares and delete the ones not handed out."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join()
        while self._ready:
            self.tracker.delete_run(self._ready.popleft())

    def _work(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (len(self._ready) > self._refill_at or self._to_make <= 0):
                    self._wake.wait()
                if self._closed:
                    return
                n = min(self.size - len(self._ready), self._to_make) if self._bulk is not None else 1
                self._to_make -= n
            self.wait_turn()
            with self._wake:
                self._making = True
            try:
                made = self._make(n)
            except Exception as exc:  # noqa: BLE001 - launches then create their runs themselves
                self.on_error(f"making a spare MLflow run failed (launches create runs at once): {exc}")
                made = None
            with self._wake:
                self._making = False
                self._ready.extend(made or ())
                self._wake.notify_all()
            if made is None:
                return

    def _make(self, n: int) -> list[str]:
        """`n` new spares (`n` is 1 unless the tracker makes runs in bulk)."""
        if self._bulk is not None:
            return self._bulk.create_runs(self.experiment_id, n, name="spare", tags=self.tags)
        return [self.tracker.create_run(self.experiment_id, name="spare", tags=self.tags)]
