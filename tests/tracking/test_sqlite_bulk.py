"""`SqliteBulk` writes what `MlflowClient` would: the same calls applied to twin runs, one pair
through the outbox's one-transaction path and one through `MlflowTracker`, read back through
MLflow, match (metric histories, latest values, params, tags, run name, status); what MLflow
refuses is refused too."""

from __future__ import annotations

import math
from pathlib import Path

from tracking import MetricPoint, MlflowTracker, RunStatus, TrackingConfig, log_payload
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
