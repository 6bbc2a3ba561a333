"""The conformance suite every `Tracker` passes (as optuna ships `optuna/testing/`).

Subclass `TrackerSuite` in a test module and give it a `tracker` fixture, parametrized over the
implementations, that returns a fresh tracker (or one shared store: each test uses its own
experiment name)::

    class TestTracker(TrackerSuite):
        @pytest.fixture(params=["mine"])
        def tracker(self, request) -> Tracker:
            return MyTracker(...)

Needs pytest (a dev dependency); nothing else in the package imports this module.
"""

from __future__ import annotations

import math
import threading
import uuid

import pytest

from tracking.base import CreatesRuns, MovesRunStart, RunNotFound, RunStatus, Tracker, TrackingError
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint


def _experiment(tracker: Tracker) -> str:
    return tracker.experiment(f"suite-{uuid.uuid4().hex[:10]}")


class TrackerSuite:
    """The rules of the `Tracker` docstring, one test each."""

    def test_is_a_tracker(self, tracker: Tracker) -> None:
        assert isinstance(tracker, Tracker)
        assert tracker.config.tracking_uri

    def test_experiment_is_created_once(self, tracker: Tracker) -> None:
        name = f"suite-{uuid.uuid4().hex[:10]}"
        ids: list[str] = []
        threads = [threading.Thread(target=lambda: ids.append(tracker.experiment(name))) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(ids)) == 1 and tracker.experiment(name) == ids[0]
        assert tracker.experiment(name + "-other") != ids[0]

    def test_a_new_run_is_running_with_its_name_and_tags(self, tracker: Tracker) -> None:
        experiment = _experiment(tracker)
        run_id = tracker.create_run(experiment, name="trial-3", tags={"autoresearch.trial": "3"})
        run = tracker.get_run(run_id)
        assert (run.run_id, run.experiment_id, run.name, run.status) == (run_id, experiment, "trial-3", RunStatus.RUNNING)
        assert run.tags["autoresearch.trial"] == "3" and run.params == {} and run.metrics == {}
        assert tracker.create_run(experiment) != run_id

    def test_create_runs_makes_each_as_create_run_does(self, tracker: Tracker) -> None:
        if not isinstance(tracker, CreatesRuns):
            pytest.skip("optional: this tracker makes runs one at a time only")
        experiment = _experiment(tracker)
        runs = tracker.create_runs(experiment, 3, name="spare", tags={"c": "one"})
        assert len(set(runs)) == 3
        for run_id in runs:
            run = tracker.get_run(run_id)
            assert (run.experiment_id, run.name, run.status) == (experiment, "spare", RunStatus.RUNNING)
            assert run.tags["c"] == "one"
        assert sorted(tracker.find_runs(experiment, {"c": "one"}, status=RunStatus.RUNNING)) == sorted(runs)
        tracker.log(runs[0], params={"lr": "0.1"})
        assert tracker.get_run(runs[0]).params == {"lr": "0.1"}

    def test_log_is_one_batch_of_metrics_params_and_tags(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        points = [MetricPoint(key="loss", value=1.0 / (i + 1), step=i) for i in range(2500)]  # > one MLflow batch
        tracker.log(run_id, metrics=points, params={"lr": "0.1"}, tags={"a": "1"})
        tracker.log(run_id, tags={"a": "2", "b": "x"})
        run = tracker.get_run(run_id)
        assert run.params == {"lr": "0.1"} and run.tags["a"] == "2" and run.tags["b"] == "x"
        assert run.metrics["loss"] == 1.0 / 2500  # the latest step's value
        history = tracker.metric_history(run_id, "loss")
        assert sorted((m.step, m.value) for m in history) == [(p.step, p.value) for p in points]
        assert tracker.metric_history(run_id, "never-logged") == []
        tracker.log(run_id)  # nothing to log: no error, no change
        assert tracker.get_run(run_id).tags == run.tags

    def test_history_keeps_duplicates_and_nonfinite_values(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        tracker.log(run_id, metrics=[MetricPoint(key="x", value=2.0, step=1)])
        tracker.log(run_id, metrics=[MetricPoint(key="x", value=2.0, step=1), MetricPoint(key="x", value=math.nan, step=2)])
        history = tracker.metric_history(run_id, "x")
        assert len(history) == 3 and all(m.key == "x" and m.timestamp > 0 for m in history)
        assert sum(math.isnan(m.value) for m in history) == 1

    def test_a_stamped_point_logged_again_is_kept_once(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        points = [MetricPoint(key="x", value=1.5, step=s, timestamp=1_700_000_000_000 + s) for s in range(3)]
        tracker.log(run_id, metrics=points)
        tracker.log(run_id, metrics=points[1:])  # a replay of part of it
        history = tracker.metric_history(run_id, "x")
        assert sorted((m.step, m.timestamp) for m in history) == [(p.step, p.timestamp) for p in points]

    def test_a_param_may_be_logged_again_only_with_the_same_value(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        tracker.log(run_id, params={"lr": "0.1"})
        tracker.log(run_id, params={"lr": "0.1"})
        with pytest.raises(TrackingError):
            tracker.log(run_id, params={"lr": "0.2"})
        assert tracker.get_run(run_id).params == {"lr": "0.1"}

    def test_find_runs_by_tags_and_status(self, tracker: Tracker) -> None:
        experiment = _experiment(tracker)
        first = tracker.create_run(experiment, tags={"c": "one", "t": "1"})
        second = tracker.create_run(experiment, tags={"c": "one", "t": "2"})
        tracker.create_run(experiment, tags={"c": "two's"})
        assert sorted(tracker.find_runs(experiment, {"c": "one"})) == sorted([first, second])
        assert tracker.find_runs(experiment, {"c": "one", "t": "2"}) == [second]
        assert len(tracker.find_runs(experiment, {"c": "two's"})) == 1  # quotes in values are safe
        assert len(tracker.find_runs(experiment, {"c": "one"}, limit=1)) == 1
        tracker.set_status(first, RunStatus.FINISHED)
        assert tracker.find_runs(experiment, {"c": "one"}, status=RunStatus.RUNNING) == [second]
        assert tracker.get_run(first).status is RunStatus.FINISHED
        tracker.delete_run(second)
        assert tracker.find_runs(experiment, {"c": "one"}, status=RunStatus.RUNNING) == []

    def test_set_status_takes_only_final_statuses(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        with pytest.raises(ValueError, match="FINISHED, FAILED or KILLED"):
            tracker.set_status(run_id, RunStatus.RUNNING)
        for status in (RunStatus.FAILED, RunStatus.KILLED):
            tracker.set_status(run_id, status)
            assert tracker.get_run(run_id).status is status

    def test_a_run_ends_at_the_end_time_given_and_its_start_moves_where_the_store_can(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        made = tracker.get_run(run_id)
        assert made.start_time is not None and made.end_time is None
        if isinstance(tracker, MovesRunStart) and tracker.moves_run_start:
            tracker.set_start_time(run_id, made.start_time + 5_000)
            assert tracker.get_run(run_id).start_time == made.start_time + 5_000
            with pytest.raises(RunNotFound):
                tracker.set_start_time("0" * 32, made.start_time)
        tracker.set_status(run_id, RunStatus.FINISHED, end_time=made.start_time + 27_000)
        assert tracker.get_run(run_id).end_time == made.start_time + 27_000

    def test_text_artifacts_are_accepted(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        tracker.log_text(run_id, "--- a\n+++ b\n", "patch/trial-1.patch")
        with pytest.raises(RunNotFound):
            tracker.log_text("0" * 32, "x", "x.txt")

    def test_datasets_are_recorded_in_order(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))
        assert tracker.datasets(run_id) == []
        sets = [DatasetInput(name="train", source="/d/train.bin", digest="sha256:" + "a" * 64),
                DatasetInput(name="val", source="/d/val.bin", digest="size+mtime:10:20")]  # fmt: skip
        tracker.log_datasets(run_id, sets)
        assert tracker.datasets(run_id) == sets

    def test_unknown_runs_raise_run_not_found(self, tracker: Tracker) -> None:
        missing = "0123456789abcdef0123456789abcdef"
        for call in (
            lambda: tracker.get_run(missing),
            lambda: tracker.log(missing, tags={"a": "1"}),
            lambda: tracker.metric_history(missing, "loss"),
            lambda: tracker.set_status(missing, RunStatus.KILLED),
        ):
            with pytest.raises(RunNotFound, match=missing):
                call()
        assert issubclass(RunNotFound, TrackingError)

    def test_writes_from_several_threads_all_land(self, tracker: Tracker) -> None:
        run_id = tracker.create_run(_experiment(tracker))

        def write(worker: int) -> None:
            for step in range(5):
                tracker.log(run_id, metrics=[MetricPoint(key=f"w{worker}", value=float(step), step=step)])

        threads = [threading.Thread(target=write, args=(w,)) for w in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(len(tracker.metric_history(run_id, f"w{w}")) == 5 for w in range(3))
