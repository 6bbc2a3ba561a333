"""Metric sources behind `MetricReader`: log, mlflow and auto, on an in-memory tracker."""

from __future__ import annotations

import time
from pathlib import Path

from compute import Attempt, Job, JobSpec, JobState
from tracking import (
    SOURCE_TAG,
    InMemoryTracker,
    LogSync,
    MetricPoint,
    MetricReader,
    MetricRules,
    MetricSource,
    QueuedTracker,
    RunStatus,
    RunView,
)


def _job(*logs: Path, state: JobState = JobState.running) -> Job:
    now = time.time()
    attempts = [Attempt(job_id="job-0000000001", number=n, node="local", gpus=[], started_at=now, log_path=str(p))
                for n, p in enumerate(logs, 1)]  # fmt: skip
    return Job(id="job-0000000001", spec=JobSpec(argv=["true"]), state=state, priority=50, created_at=now,
               updated_at=now, checkpoint_dir="/tmp", attempts=attempts)  # fmt: skip


def _run(tracker: InMemoryTracker) -> str:
    return tracker.create_run(tracker.experiment("e"))


def test_log_source_reads_the_log_and_logs_each_line_once(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = _run(tracker)
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 objective: 3\n")
    reader = MetricReader(tracker, "objective", MetricSource.log)
    assert reader.read(0, run_id, _job(log), tags={"autoresearch.job_id": "job-1"}) == [(1, 3.0)]
    log.write_bytes(log.read_bytes() + b"step: 2 objective: 2\n")
    assert reader.read(0, run_id, _job(log)) == [(1, 3.0), (2, 2.0)]
    assert reader.read(0, run_id, _job(log)) == [(1, 3.0), (2, 2.0)]  # nothing new: nothing written
    assert [m.step for m in tracker.metric_history(run_id, "objective")] == [1, 2]
    assert tracker.get_run(run_id).tags["autoresearch.job_id"] == "job-1"  # rode on the first batch

    restarted = MetricReader(tracker, "objective", MetricSource.log)  # a new runner on the same run
    log.write_bytes(log.read_bytes() + b"step: 3 objective: 1\n")
    assert restarted.read(0, run_id, _job(log, state=JobState.succeeded), final=True)[-1] == (3, 1.0)
    assert [m.step for m in tracker.metric_history(run_id, "objective")] == [1, 2, 3]


def test_mlflow_source_reads_the_last_value_of_each_step(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = _run(tracker)
    tracker.log(run_id, metrics=[MetricPoint(key="objective", value=v, step=s) for s, v in ((1, 5), (2, 4), (2, 3))])
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 objective: 99\n")
    reader = MetricReader(tracker, "objective", MetricSource.mlflow)
    assert reader.read(0, run_id, _job(log), final=True, tags={"t": "1"}) == [(1, 5.0), (2, 3.0)]
    assert tracker.get_run(run_id).tags["t"] == "1" and len(tracker.metric_history(run_id, "objective")) == 3


def test_auto_waits_writing_nothing_then_locks_in_log_once_the_log_is_clear(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = _run(tracker)
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 objective: 3\n")
    reader = MetricReader(tracker, "objective", MetricSource.auto)
    assert reader.read(0, run_id, _job(log), tags={"x": "y"}) == [(1, 3.0)]
    assert tracker.get_run(run_id).tags == {} and tracker.get_run(run_id).metrics == {}  # undecided: no writes
    log.write_bytes(log.read_bytes() + b"step: 2 objective: 2\n")
    assert reader.read(0, run_id, _job(log)) == [(1, 3.0), (2, 2.0)]
    assert tracker.get_run(run_id).tags[SOURCE_TAG] == "log"
    assert [m.step for m in tracker.metric_history(run_id, "objective")] == [1, 2]
    again = MetricReader(tracker, "objective", MetricSource.auto)  # the choice survives a restart
    tracker.log(run_id, metrics=[MetricPoint(key="other", value=1.0, step=0)])
    assert again.read(0, run_id, _job(log), final=True) == [(1, 3.0), (2, 2.0)]


def test_auto_picks_mlflow_when_the_job_logs_there_and_writes_no_log_points(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    queued = QueuedTracker(tracker, on_error=print)
    run_id = _run(tracker)
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 objective: 3\n")
    reader = MetricReader(queued, "objective", MetricSource.auto)
    assert reader.read(0, run_id, _job(log)) == [(1, 3.0)]
    tracker.log(run_id, metrics=[MetricPoint(key="objective", value=3.0, step=1)])  # the job's own MLflow call
    log.write_bytes(log.read_bytes() + b"step: 2 objective: 2\n")
    tracker.log(run_id, metrics=[MetricPoint(key="objective", value=2.0, step=2)])
    assert reader.read(0, run_id, _job(log)) == [(1, 3.0), (2, 2.0)]
    queued.close()
    assert tracker.get_run(run_id).tags[SOURCE_TAG] == "mlflow"
    assert len(tracker.metric_history(run_id, "objective")) == 2  # printed and logged: recorded once


def test_queued_tracker_applies_writes_in_order_and_reports_failures() -> None:
    tracker = InMemoryTracker()
    errors: list[str] = []
    queued = QueuedTracker(tracker, on_error=errors.append)
    run_id = queued.create_run(queued.experiment("e"))
    for step in range(50):
        queued.log(run_id, metrics=[MetricPoint(key="m", value=float(step), step=step)])
    queued.log("no-such-run", tags={"a": "b"})
    queued.set_status(run_id, RunStatus.FINISHED)
    queued.flush()
    assert [m.step for m in queued.metric_history(run_id, "m")] == list(range(50))
    assert queued.get_run(run_id).status is RunStatus.FINISHED
    assert len(errors) == 1 and "no-such-run" in errors[0]
    queued.close()


def test_queued_tracker_holds_writes_until_released() -> None:
    tracker = InMemoryTracker()
    queued = QueuedTracker(tracker, on_error=print, max_hold_s=600.0)
    run_id = queued.create_run(queued.experiment("e"))
    queued.hold()
    queued.log(run_id, tags={"a": "b"})
    time.sleep(0.3)  # the writer would have applied it by now, were it not held
    assert "a" not in tracker.get_run(run_id).tags and queued.pending() == 1
    queued.release()
    queued.flush()
    assert tracker.get_run(run_id).tags["a"] == "b"
    queued.hold()
    queued.close()  # closing applies what is queued, held or not
    short = QueuedTracker(tracker, on_error=print, max_hold_s=0.05)
    short.hold()
    short.wait_released()  # a hold nobody releases ends by itself
    short.close()


class _CountingTracker(InMemoryTracker):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def get_run(self, run_id: str) -> RunView:
        self.reads += 1
        return super().get_run(run_id)


def test_a_log_source_reads_a_run_the_runner_just_made_without_reading_it_back(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 objective: 3\nstep: 2 objective: 2\n")
    for source, reads in ((MetricSource.log, 0), (MetricSource.auto, 1)):
        tracker = _CountingTracker()
        run_id = _run(tracker)
        reader = MetricReader(tracker, "objective", source)
        values = reader.read(0, run_id, _job(log, state=JobState.succeeded), final=True, new_run=True)
        assert values == [(1, 3.0), (2, 2.0)]
        assert tracker.reads == reads, source  # auto must look whether the job logged metrics itself
        assert [m.step for m in tracker.metric_history(run_id, "objective")] == [1, 2]


def test_a_log_source_logs_what_a_separate_sync_would_with_one_parse_of_the_log(tmp_path: Path) -> None:
    """The reader parses each log once (its scan's parse goes to the sync): the run gets the same
    points as a `LogSync` of its own, `record` filter and attempts included; a restarted reader
    logs only what the run lacks."""
    rules = MetricRules(record=frozenset({"objective"}))
    first, second = tmp_path / "attempt-1.log", tmp_path / "attempt-2.log"
    first.write_bytes(b"loss: 9\nobjective: 3\nloss: 8\nstep: 2 objective: 2 lr: 0.1\n")
    second.write_bytes(b"objective: 1.5\nloss: 7\n")
    shared, alone = InMemoryTracker(), InMemoryTracker()
    shared_run, alone_run = _run(shared), _run(alone)

    reader = MetricReader(shared, "objective", MetricSource.log, rules)
    assert reader.read(0, shared_run, _job(first)) == [(0, 3.0), (2, 2.0)]
    sync = LogSync(alone, alone_run, rules=rules)
    sync.sync({1: first})
    with second.open("ab") as f:
        f.write(b"step: 5 objective: 1\n")
    done = _job(first, second, state=JobState.succeeded)
    assert reader.read(0, shared_run, done, final=True) == [(0, 3.0), (2, 1.5), (5, 1.0)]  # steps carry over
    sync.sync({1: first, 2: second}, final=True)

    def logged(tracker: InMemoryTracker, run_id: str) -> dict[str, list[tuple[int, float]]]:
        return {key: [(m.step, m.value) for m in tracker.metric_history(run_id, key)] for key in ("objective", "loss")}

    assert logged(shared, shared_run) == logged(alone, alone_run) == {
        "objective": [(0, 3.0), (2, 2.0), (2, 1.5), (5, 1.0)], "loss": []}  # fmt: skip
    assert shared.get_run(shared_run).tags == alone.get_run(alone_run).tags == {}  # no parser state in the run

    restarted = MetricReader(shared, "objective", MetricSource.log, rules)  # a new runner: its scan starts at 0
    with second.open("ab") as f:
        f.write(b"step: 6 objective: 0.5\n")
    assert restarted.read(0, shared_run, done, final=True)[-1] == (6, 0.5)
    assert [m.step for m in shared.metric_history(shared_run, "objective")] == [0, 2, 2, 5, 6]
