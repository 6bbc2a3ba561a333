"""The one log -> run sync: each printed line logged once, across calls, attempts and processes,
with no parser state left in the run (its tags, params and metrics are what users browse)."""

from __future__ import annotations

from pathlib import Path

from tracking import (
    InMemoryTracker,
    LogSync,
    MetricPoint,
    MlflowTracker,
    ParserState,
    TrackingConfig,
    read_log_points,
)


def test_sync_logs_each_line_once_and_skips_values_already_logged(
    tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    tracker = MlflowTracker(tracking)
    client = tracker.client
    run_id = tracker.create_run(tracker.experiment(experiment_name))
    client.log_metric(run_id, "loss", 2.0, step=2)  # the script logged this one itself
    log = tmp_path / "attempt-1.log"
    log.write_bytes(b"step: 1\nloss: 3.0\nstep: 2\nloss: 2.0\nlo")

    def sync() -> tuple[ParserState, int]:
        syncer = LogSync(tracker, run_id)  # as a fresh process would
        logged = syncer.sync({1: log}, skip_logged=True)
        return syncer.states[1], logged

    state, logged = sync()
    assert logged == 1 and state.offset == len(b"step: 1\nloss: 3.0\nstep: 2\nloss: 2.0\n")
    assert sync()[1] == 0  # nothing new

    with log.open("ab") as f:
        f.write(b"ss: 1.0\nstep: 3\nloss: 0.5\n")
    state, logged = sync()
    assert logged == 2
    history = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "loss"))
    assert history == [(1, 3.0), (2, 1.0), (2, 2.0), (3, 0.5)]
    run = client.get_run(run_id)
    assert not [k for k in run.data.tags if k.startswith("autoresearch.")] and not run.data.params  # no parser state


def test_a_restart_logs_nothing_twice_and_the_run_holds_no_parser_state(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = tracker.create_run(tracker.experiment("e"))
    log = tmp_path / "a.log"
    log.write_bytes(b"loss: 9\nstep: 1 loss: 3\nstep: 2 loss: 2\n")
    assert LogSync(tracker, run_id).sync({1: log}, tags={"autoresearch.job_id": "job-1"}) == 3
    assert tracker.get_run(run_id).tags == {"autoresearch.job_id": "job-1"}  # no `autoresearch.log_parser...`
    log.write_bytes(log.read_bytes() + b"step: 3 loss: 1\n")
    again = LogSync(tracker, run_id)  # a new process: parses from the start, logs what the run lacks
    assert again.sync({1: log}, skip_logged=True) == 1 and again.sync({1: log}) == 0
    assert [(m.step, m.value) for m in tracker.metric_history(run_id, "loss")] == [(0, 9), (1, 3), (2, 2), (3, 1)]
    assert tracker.get_run(run_id).tags == {"autoresearch.job_id": "job-1"}


def test_a_new_attempt_goes_on_from_the_steps_of_the_one_before(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = tracker.create_run(tracker.experiment("e"))
    first, second = tmp_path / "attempt-1.log", tmp_path / "attempt-2.log"
    first.write_bytes(b"loss: 3\nloss: 2\n")
    second.write_bytes(b"loss: 1\n")
    LogSync(tracker, run_id).sync({1: first, 2: second}, final=True)
    assert [(m.step, m.value) for m in tracker.metric_history(run_id, "loss")] == [(0, 3), (1, 2), (2, 1)]
    assert [(p.step, p.value) for p in read_log_points({1: first, 2: second})] == [(0, 3), (1, 2), (2, 1)]
    assert tracker.get_run(run_id).tags == {}


def test_runs_synced_by_older_runners_go_on_without_their_state_tags(tmp_path: Path) -> None:
    tracker = InMemoryTracker()
    run_id = tracker.create_run(tracker.experiment("e"))
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 loss: 3\nstep: 2 loss: 2\n")
    old = ParserState(offset=len(b"step: 1 loss: 3\n"), step=1, counts={"loss": 1})
    tracker.log(run_id, metrics=[MetricPoint(key="loss", value=3, step=1)],
                tags={"autoresearch.log_parser.attempt-1": old.model_dump_json()})  # what older runners left
    assert LogSync(tracker, run_id).sync({1: log}, skip_logged=True) == 1
    assert [(m.step, m.value) for m in tracker.metric_history(run_id, "loss")] == [(1, 3), (2, 2)]


def test_read_log_points_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"step: 1 loss: 3\nloss: 2")  # the last line is partial (no newline yet)
    assert [(p.key, p.step) for p in read_log_points({1: log})] == [("loss", 1)]
    assert [(p.key, p.step) for p in read_log_points({1: log}, final=True)] == [("loss", 1), ("loss", 1)]
    assert read_log_points({1: tmp_path / "missing.log"}) == []
