"""`SqliteBulk` writes what `MlflowClient` would: the same calls applied to twin runs, one pair
through the outbox's one-transaction path and one through `MlflowTracker`, read back through
MLflow, match (metric histories, latest values, params, tags, run name, status); what MLflow
refuses is refused too. Runs made by `create_runs` are the rows `MlflowClient.create_run` makes,
and take every later write."""

from __future__ import annotations

import math
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException

from tracking import MetricPoint, MlflowTracker, RunStatus, TrackingConfig, TrackingError, log_payload
from tracking.sqlite_bulk import SqliteBulk
from tracking.tags import RUN_NAME_TAG

T0 = 1_700_000_000_000


def _calls() -> list[tuple[str, dict]]:
    points = [MetricPoint(key="loss", value=1.0 / (s + 1), step=s, timestamp=T0 + s) for s in range(5)]
    odd = [MetricPoint(key="odd", value=v, step=i, timestamp=T0 + 10 + i) for i, v in
           enumerate([math.nan, math.inf, -math.inf, 2.0])]  # fmt: skip
    late = [MetricPoint(key="loss", value=9.0, step=2, timestamp=T0 + 99)]  # an older step, logged later
    return [
        ("log", log_payload([], {"lr": "0.1", "depth": "3"}, {RUN_NAME_TAG: "trial-7", "a": "1"})),
        ("log", log_payload(points, None, {"a": "2"})),
        ("log", log_payload(points[2:] + odd, None, None)),  # a replayed part: kept once
        ("log", log_payload(late, {"lr": "0.1"}, {"b": "x"})),
        ("set_status", {"status": "FINISHED"}),
    ]


def _seen(tracker: MlflowTracker, run_id: str) -> dict:
    run = tracker.client.get_run(run_id)
    history = {key: sorted((m.step, m.timestamp, m.value if not math.isnan(m.value) else "nan")
                           for m in tracker.client.get_metric_history(run_id, key)) for key in ("loss", "odd")}  # fmt: skip
    latest = {k: "nan" if math.isnan(v) else v for k, v in run.data.metrics.items()}
    tags = {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.") or k == RUN_NAME_TAG}
    return {"history": history, "latest": latest, "params": run.data.params, "tags": tags,
            "name": run.info.run_name, "status": run.info.status, "ended": run.info.end_time is not None}  # fmt: skip


def test_bulk_writes_read_back_as_the_client_writes_them(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    bulk_run, client_run = tracker.create_run(experiment), tracker.create_run(experiment)
    errors = SqliteBulk(Path(tracking.tracking_uri.removeprefix("sqlite:///"))).apply(
        [(bulk_run, kind, payload) for kind, payload in _calls()])  # fmt: skip
    assert errors == []
    for kind, payload in _calls():
        if kind == "set_status":
            tracker.set_status(client_run, RunStatus(payload["status"]))
        else:
            metrics = [MetricPoint(key=k, value=v, step=s, timestamp=t) for k, v, s, t in payload["metrics"]]
            tracker.log(client_run, metrics=metrics, params=payload["params"], tags=payload["tags"])
    assert _seen(tracker, bulk_run) == _seen(tracker, client_run)
    assert _seen(tracker, bulk_run)["latest"]["loss"] == 1.0 / 5  # step 4 beats the later-logged step 2


def test_bulk_refuses_what_mlflow_refuses_and_writes_the_rest(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    ok, deleted, changed = (tracker.create_run(experiment) for _ in range(3))
    tracker.log(changed, params={"lr": "0.1"})
    tracker.delete_run(deleted)
    bulk = SqliteBulk(Path(tracking.tracking_uri.removeprefix("sqlite:///")))
    point = [MetricPoint(key="m", value=1.0, step=0, timestamp=T0)]
    errors = bulk.apply([
        ("no-such-run", "log", log_payload(point, None, None)),
        (deleted, "log", log_payload(point, None, None)),
        (changed, "log", log_payload(point, {"lr": "0.2"}, {"t": "1"})),
        (ok, "log", log_payload(point, None, {"bad key!": "x"})),
        (ok, "log", log_payload(point, None, {"t": "1"})),
    ])  # fmt: skip
    assert len(errors) == 4 and "no-such-run" in errors[0] and "'active' state" in errors[1]
    assert "Changing param values is not allowed" in errors[2] and "bad key!" in errors[3]
    assert tracker.get_run(changed).params == {"lr": "0.1"} and "t" not in tracker.get_run(changed).tags
    assert tracker.metric_history(changed, "m") == []
    assert [m.value for m in tracker.metric_history(ok, "m")] == [1.0] and tracker.get_run(ok).tags["t"] == "1"


def _made(tracker: MlflowTracker, run_id: str) -> dict[str, Any]:
    """A new run as MLflow reads it back, and its rows in the store, with its id, start time and
    run name left out (they differ between any two runs)."""
    run = tracker.client.get_run(run_id)
    info = run.info
    db = sqlite3.connect(tracker.config.tracking_uri.removeprefix("sqlite:///"))
    db.row_factory = sqlite3.Row
    row = dict(db.execute("SELECT * FROM runs WHERE run_uuid = ?", (run_id,)).fetchone())
    tag_rows = db.execute("SELECT key, value FROM tags WHERE run_uuid = ? ORDER BY key", (run_id,)).fetchall()
    db.close()
    assert info.start_time is not None and row.pop("start_time") == info.start_time and info.end_time is None

    def same(value: Any) -> Any:
        return value.replace(run_id, "<id>").replace(info.run_name, "<name>") if isinstance(value, str) else value

    return {
        "info": {k: same(getattr(info, k)) for k in ("status", "lifecycle_stage", "artifact_uri", "run_name",
                                                    "experiment_id", "user_id", "end_time")},
        "tags": {k: same(v) for k, v in run.data.tags.items()}, "params": run.data.params, "metrics": run.data.metrics,
        "row": {k: same(v) for k, v in row.items()}, "tag_rows": [tuple(same(v) for v in r) for r in tag_rows],
    }  # fmt: skip


def test_create_runs_makes_the_runs_mlflow_makes_and_they_take_later_writes(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    bulk = SqliteBulk(Path(tracking.tracking_uri.removeprefix("sqlite:///")))
    made: list[str] = []
    for name, tags in [("spare", {"c": "pool", "mlflow.user": "alice"}), (None, {"c": "pool"}),
                       (None, {RUN_NAME_TAG: "named", "c": "pool"}), ("named", {RUN_NAME_TAG: "named"})]:  # fmt: skip
        runs = bulk.create_runs(experiment, 3, name=name, tags=tags)
        by_client = tracker.client.create_run(experiment, run_name=name, tags=tags).info.run_id
        assert len(set(runs)) == 3 and by_client not in runs
        assert all(_made(tracker, run_id) == _made(tracker, by_client) for run_id in runs), (name, tags)
        made += runs
    assert _made(tracker, made[0])["info"]["user_id"] == "alice"
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d+", tracker.client.get_run(made[3]).info.run_name)  # MLflow's random names
    assert len({tracker.client.get_run(run_id).info.run_name for run_id in made[3:6]}) > 1

    found = tracker.client.search_runs([experiment], "tags.c = 'pool' and attributes.status = 'RUNNING'",
                                       max_results=100)  # fmt: skip
    assert set(made[:9]) <= {r.info.run_id for r in found} and len(found) == 9 + 3
    named = tracker.client.search_runs([experiment], "attributes.run_name = 'spare'")
    assert {r.info.run_id for r in named} >= set(made[:3])

    first, second, third = made[:3]
    point = [MetricPoint(key="loss", value=0.5, step=1, timestamp=T0)]
    assert bulk.apply([(first, "log", log_payload(point, {"lr": "0.1"}, {RUN_NAME_TAG: "trial-1"})),
                       (first, "set_status", {"status": "FINISHED"})]) == []  # fmt: skip
    tracker.client.log_batch(second, metrics=[Metric("loss", 0.7, T0, 1)], params=[Param("lr", "0.2")],
                             tags=[RunTag("t", "1")])  # fmt: skip
    tracker.client.set_terminated(second, status="FAILED")
    tracker.client.delete_run(third)
    one, two = tracker.client.get_run(first), tracker.client.get_run(second)
    assert (one.info.status, one.info.run_name, one.data.params, one.data.metrics) == \
        ("FINISHED", "trial-1", {"lr": "0.1"}, {"loss": 0.5})  # fmt: skip
    assert (two.info.status, two.data.params, two.data.metrics, two.data.tags["t"]) == \
        ("FAILED", {"lr": "0.2"}, {"loss": 0.7}, "1")  # fmt: skip
    assert one.info.end_time is not None and two.info.end_time is not None
    assert tracker.client.get_run(third).info.lifecycle_stage == "deleted"
    assert third not in tracker.find_runs(experiment, {"c": "pool"})


def test_create_runs_refuses_what_mlflow_refuses_and_makes_none(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    deleted, active = tracker.experiment(experiment_name), tracker.experiment(experiment_name + "-active")
    tracker.client.delete_experiment(deleted)
    bulk = SqliteBulk(Path(tracking.tracking_uri.removeprefix("sqlite:///")))
    refusals = [
        (deleted, {}, "spare", f"The experiment {deleted} must be in the 'active' state. Current state is deleted."),
        ("987654321", {}, "spare", "No Experiment with id=987654321 exists"),
        ("not-a-number", {}, "spare", "Invalid experiment ID 'not-a-number'"),
        (active, {RUN_NAME_TAG: "other"}, "spare", "Both 'run_name' argument and 'mlflow.runName' tag are specified"),
    ]
    for experiment, tags, name, message in refusals:
        with pytest.raises(MlflowException, match=re.escape(message)):
            bulk.create_runs(experiment, 2, name=name, tags=tags)
        with pytest.raises(MlflowException, match=re.escape(message)):
            tracker.client.create_run(experiment, run_name=name, tags=tags)
    with pytest.raises(TrackingError, match=f"create_runs on {re.escape(tracking.tracking_uri)} failed: The exp"):
        tracker.create_runs(deleted, 2, name="spare")
    with pytest.raises(MlflowException, match="bad key!"):  # MLflow's create_run takes it; its log_batch would not
        bulk.create_runs(active, 2, tags={"bad key!": "x"})
    db = sqlite3.connect(tracking.tracking_uri.removeprefix("sqlite:///"))
    assert db.execute("SELECT count(*) FROM runs WHERE experiment_id IN (?, ?)", (deleted, active)).fetchone() == (0,)
    db.close()


def test_an_untested_mlflow_release_writes_through_the_client_with_the_same_result(
    tracking: TrackingConfig, experiment_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compute.releases import untested_release
    from tracking import sqlite_bulk
    from tracking.outbox import Write, WriteKind, apply_writes

    def applied(run_id: str) -> list[str]:
        errors: list[str] = []
        apply_writes(tracker, [Write(i, run_id, WriteKind(kind), payload) for i, (kind, payload) in enumerate(_calls())],
                     errors.append)  # fmt: skip
        return errors

    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    [bulk_run] = tracker.create_runs(experiment, 1, name="twin")
    assert tracker.runs_in_bulk and applied(bulk_run) == []

    monkeypatch.setattr(sqlite_bulk, "mlflow_version", lambda: "3.18.0")  # the version string the check reads
    sqlite_bulk.tested_mlflow_installed.cache_clear()
    try:
        assert SqliteBulk.of(tracking.tracking_uri) is None, "an untested release never writes MLflow's tables"
        fallback = MlflowTracker(tracking)
        assert not fallback.runs_in_bulk
        [client_run] = fallback.create_runs(experiment, 1, name="twin")
        tracker = fallback
        assert applied(client_run) == []
    finally:
        sqlite_bulk.tested_mlflow_installed.cache_clear()
    assert _seen(tracker, client_run) == _seen(tracker, bulk_run)
    assert untested_release("mlflow", "3.17.9", sqlite_bulk.TESTED_MLFLOW, "") is None  # any 3.17 patch release
