"""The durable outbox of tracking writes, on a real MLflow store: writes queued by a process
killed with SIGKILL are applied by the next writer exactly once; a write applied twice (a writer
killed between applying and deleting it) stores nothing new; a closing tracker hands what is
pending to a detached writer that applies it and exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tracking import (
    MetricPoint, MlflowTracker, Outbox, QueuedTracker, RunStatus, TrackingConfig, WriteKind, apply_writes,
    drain_outbox, log_payload, pending_writes, wait_drained, writer_pid, writer_turn,
)  # fmt: skip

REPO = Path(__file__).resolve().parents[2]
STEPS = 40

_QUEUE_AND_DIE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from tracking import MetricPoint, MlflowTracker, QueuedTracker, RunStatus, resolve_tracking
    tracker = QueuedTracker(MlflowTracker(resolve_tracking(sys.argv[1])), on_error=print, max_hold_s=600.0,
                            outbox=Path(sys.argv[2]))
    tracker.hold()  # nothing is applied: every write is still in the outbox when the process dies
    for run_id in sys.argv[3:]:
        for step in range({steps}):
            tracker.log(run_id, metrics=[MetricPoint(key="loss", value=1.0 / (step + 1), step=step)],
                        tags={{"last_step": str(step)}})
        tracker.log(run_id, params={{"lr": "0.1"}})
        tracker.set_status(run_id, RunStatus.FINISHED)
    print("queued", tracker.pending(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""").format(steps=STEPS)


def _runs(tracker: MlflowTracker, experiment_name: str, n: int) -> list[str]:
    experiment = tracker.experiment(experiment_name)
    return [tracker.create_run(experiment) for _ in range(n)]


def _assert_each_point_once(tracker: MlflowTracker, run_ids: list[str]) -> None:
    for run_id in run_ids:
        history = tracker.metric_history(run_id, "loss")
        assert sorted(m.step for m in history) == list(range(STEPS)), run_id
        run = tracker.get_run(run_id)
        assert run.status is RunStatus.FINISHED and run.params == {"lr": "0.1"}
        assert run.tags["last_step"] == str(STEPS - 1)


def test_writes_of_a_killed_process_are_applied_once_by_the_next_writer(
    tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    tracker = MlflowTracker(tracking)
    run_ids = _runs(tracker, experiment_name, 3)
    outbox = tmp_path / "outbox.db"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _QUEUE_AND_DIE, tracking.tracking_uri, str(outbox), *run_ids],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert f"queued {3 * (STEPS + 2)}" in done.stdout
    assert pending_writes(outbox) == 3 * (STEPS + 2)
    assert tracker.metric_history(run_ids[0], "loss") == []  # nothing reached MLflow before the kill

    restarted = QueuedTracker(tracker, on_error=print, outbox=outbox)
    restarted.flush()
    restarted.close()
    assert pending_writes(outbox) == 0
    _assert_each_point_once(tracker, run_ids)


def test_a_write_applied_twice_stores_nothing_new(tracking: TrackingConfig, experiment_name: str,
                                                  tmp_path: Path) -> None:  # fmt: skip
    tracker = MlflowTracker(tracking)
    run_ids = _runs(tracker, experiment_name, 2)
    outbox = Outbox(tmp_path / "outbox.db")
    for run_id in run_ids:
        for step in range(STEPS):
            point = MetricPoint(key="loss", value=1.0 / (step + 1), step=step)
            outbox.put(run_id, WriteKind.log, log_payload([point], None, {"last_step": str(step)}))
        outbox.put(run_id, WriteKind.log, log_payload([], {"lr": "0.1"}, None))
        outbox.put(run_id, WriteKind.set_status, {"status": "FINISHED"})
    batch = outbox.take()
    errors: list[str] = []
    apply_writes(tracker, batch, errors.append)  # a writer killed here, before `done`, ...
    assert drain_outbox(outbox, tracker, errors.append) == len(batch)  # ... and the next one replays it all
    assert errors == [] and outbox.pending() == 0
    _assert_each_point_once(tracker, run_ids)
    outbox.close()


def test_closing_with_detach_leaves_the_backlog_to_a_writer_that_outlives_the_tracker(
    tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    tracker = MlflowTracker(tracking)
    run_ids = _runs(tracker, experiment_name, 2)
    outbox = tmp_path / "outbox.db"
    queued = QueuedTracker(tracker, on_error=print, max_hold_s=600.0, outbox=outbox, detach_after_s=0.0)
    queued.hold()
    for run_id in run_ids:
        for step in range(STEPS):
            queued.log(run_id, metrics=[MetricPoint(key="loss", value=1.0 / (step + 1), step=step)],
                       tags={"last_step": str(step)})  # fmt: skip
        queued.log(run_id, params={"lr": "0.1"})
        queued.set_status(run_id, RunStatus.FINISHED)
    pid = queued.close(detach=True)
    assert pid is not None and queued.pending_at_close == 2 * (STEPS + 2)
    assert writer_pid(outbox) is not None  # handed over with the lock: never a moment without a writer
    assert wait_drained(outbox, timeout_s=120) == 0, outbox.with_name("outbox.db.log").read_text()
    while writer_pid(outbox) is not None:  # it exits once the outbox is empty
        time.sleep(0.05)
    _assert_each_point_once(tracker, run_ids)
    assert "applied 84 writes" in outbox.with_name("outbox.db.log").read_text()


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    with writer_turn(outbox) as mine:
        assert mine and writer_pid(tmp_path / "outbox.db") == os.getpid()
        with writer_turn(Outbox(tmp_path / "outbox.db"), stop=lambda: True) as second:
            assert not second  # it waited for the first, and gave up when told to stop
    assert writer_pid(tmp_path / "outbox.db") is None
    outbox.close()


class _Overlaps(MlflowTracker):
    """A real tracker that records how many of its calls ran at the same time (at most)."""

    def __init__(self, tracking: TrackingConfig) -> None:
        super().__init__(tracking)
        self.inside, self.most, self.lock = 0, 0, threading.Lock()

    def _enter(self) -> None:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.002)  # a slow store: calls that are not serialised overlap here

    def _leave(self) -> None:
        with self.lock:
            self.inside -= 1

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        self._enter()
        try:
            return super().create_run(experiment_id, name=name, tags=tags)
        finally:
            self._leave()

    def create_runs(self, experiment_id: str, n: int, *, name: str | None = None,
                    tags: Mapping[str, str] | None = None) -> list[str]:  # fmt: skip
        self._enter()
        try:
            return super().create_runs(experiment_id, n, name=name, tags=tags)
        finally:
            self._leave()

    def find_runs(self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None,
                  limit: int = 1000) -> list[str]:  # fmt: skip
        self._enter()
        try:
            return super().find_runs(experiment_id, tags, status=status, limit=limit)
        finally:
            self._leave()

    def log(self, run_id: str, *, metrics: Sequence[MetricPoint] = (), params: Mapping[str, str] | None = None,
            tags: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self._enter()
        try:
            super().log(run_id, metrics=metrics, params=params, tags=tags)
        finally:
            self._leave()


def test_one_call_at_a_time_reaches_the_store_from_a_queued_trackers_threads(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    """The writer thread, spare-run makers and readers of one process take turns on the store
    (two SQLite connections colliding wait in SQLite's busy handler, which sleeps)."""
    inner = _Overlaps(tracking)
    tracker = QueuedTracker(inner, on_error=print)
    experiment = tracker.experiment(experiment_name)
    made: list[str] = []

    def make() -> None:
        runs = [tracker.create_run(experiment, tags={"maker": "yes"}) for _ in range(2)]
        runs += tracker.create_runs(experiment, 2, tags={"maker": "yes"})  # spare runs, several at once
        for run_id in runs:
            made.append(run_id)
            for step in range(5):
                tracker.log(run_id, metrics=[MetricPoint(key="loss", value=float(step), step=step)])
            tracker.find_runs(experiment, {"maker": "yes"})

    threads = [threading.Thread(target=make) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    tracker.close()

    assert len(made) == 12 and inner.most == 1, f"{inner.most} calls reached the store at once"
    assert all(len(inner.metric_history(run_id, "loss")) == 5 for run_id in made)
