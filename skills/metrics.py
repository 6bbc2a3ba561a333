"""The fetch_metrics skill: latest, best and a downsampled history of a run's metrics."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

from skills.context import SkillContext
from skills.jobs import JobId
from skills.logmetrics import ParserState, sync_log_metrics
from skills.models import ErrorCode, SkillFailure, SkillInput, SkillOutput
from skills.tracking import RUN_LABEL, finish_run
from skills.views import compute_errors, tracking_errors

if TYPE_CHECKING:
    from mlflow.entities import Metric, Run

_LOWER_IS_BETTER = ("loss", "err", "bpb", "bpc", "perplexity", "ppl", "mse", "mae", "rmse", "nll", "regret",
                    "latency", "time", "wer", "cer")  # fmt: skip
MAX_KEYS = 50


class Goal(str, enum.Enum):
    min = "min"
    max = "max"


class MetricsInput(SkillInput):
    run_id: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The MLflow run id. Give this or job_id."""
    job_id: JobId | None = None
    """A job submitted with `mlflow`: its run is used."""
    keys: Annotated[list[str], Field(min_length=1, max_length=MAX_KEYS)] | None = None
    """Metric names; default: every metric of the run (at most 50)."""
    max_points: Annotated[int, Field(ge=2, le=500)] = 20
    """History points per metric after downsampling (first, last and best always kept)."""
    minimize: list[str] | None = None
    """Metrics where lower is better; default guessed from the name (loss, error, bpb ... are minimized)."""
    maximize: list[str] | None = None
    """Metrics where higher is better."""
    sync_logs: bool = True
    """With job_id: first log the `key: value` and JSON lines the job printed since the last sync into the
    run, and end the run (FINISHED, FAILED or KILLED) if the job has ended and its script did not."""


class MetricValue(BaseModel):
    model_config = ConfigDict(frozen=True)

    value: float | None
    """None for NaN or infinity (see `nonfinite`)."""
    step: int
    nonfinite: str | None = None
    """`nan`, `inf` or `-inf` when the value was not finite."""


class MetricSummary(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    key: str
    goal: Goal
    """Whether lower (min) or higher (max) is better, used for `best`."""
    count: int
    """Points logged in all."""
    latest: MetricValue
    """The point with the highest step (the last logged among equal steps)."""
    best: MetricValue | None
    """The best finite point; None if none is finite."""
    history: list[tuple[int, float | None]]
    """[step, value] pairs, downsampled to max_points."""


class FetchMetricsOutput(SkillOutput):
    run_id: str
    run_name: str | None = None
    experiment_id: str
    status: str
    """MLflow run status: RUNNING, FINISHED, FAILED, KILLED."""
    job_id: str | None = None
    metrics: list[MetricSummary]
    missing: list[str] = []
    """Requested keys the run has no values for (yet)."""
    params: dict[str, str] = {}
    """The run's parameters."""
    log_points_added: int = 0
    """Points read from the job's log into the run by this call."""


def fetch_metrics(ctx: SkillContext, args: MetricsInput) -> FetchMetricsOutput:
    """Read metrics of an MLflow run (or of a job tied to one): latest, best and a downsampled history."""
    if (args.run_id is None) == (args.job_id is None):
        raise SkillFailure(ErrorCode.invalid_arguments, "give exactly one of run_id or job_id", field="run_id")
    run_id, added = args.run_id, 0
    with tracking_errors(ctx):
        if args.job_id is not None:
            run_id, added = _run_of_job(ctx, args.job_id, args.sync_logs)
        assert run_id is not None  # exactly one of run_id, job_id was given
        run = _get_run(ctx, run_id)
        keys = args.keys if args.keys is not None else sorted(run.data.metrics)[:MAX_KEYS]
        minimize, maximize = set(args.minimize or []), set(args.maximize or [])
        summaries, missing = [], []
        for key in keys:
            history = ctx.mlflow.get_metric_history(run_id, key)
            if not history:
                missing.append(key)
                continue
            goal = Goal.min if key in minimize else Goal.max if key in maximize else _guess_goal(key)
            summaries.append(_summary(key, goal, history, args.max_points))
    return FetchMetricsOutput(
        run_id=run_id,
        run_name=run.info.run_name,
        experiment_id=run.info.experiment_id,
        status=run.info.status,
        job_id=args.job_id,
        metrics=summaries,
        missing=missing,
        params=dict(run.data.params),
        log_points_added=added,
    )


def _get_run(ctx: SkillContext, run_id: str) -> Run:
    from mlflow.exceptions import MlflowException

    try:
        return ctx.mlflow.get_run(run_id)
    except MlflowException as exc:
        if exc.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise
        raise SkillFailure(
            ErrorCode.not_found,
            f"no MLflow run {run_id!r} in {ctx.tracking.tracking_uri}: check the id, or the tracking URI "
            "(--tracking-uri / MLFLOW_TRACKING_URI)",
            field="run_id",
        ) from exc


def _run_of_job(ctx: SkillContext, job_id: str, sync: bool) -> tuple[str, int]:
    with compute_errors():
        job = ctx.client.get(job_id)
    run_id = job.spec.labels.get(RUN_LABEL)
    if run_id is None:
        raise SkillFailure(
            ErrorCode.not_found,
            f"job {job_id} is not tied to an MLflow run (submit_job with mlflow: {{experiment: ...}} ties one); "
            "give run_id instead",
            field="job_id",
        )
    added, state = 0, None
    if sync:
        for attempt in job.attempts:
            state, logged = sync_log_metrics(
                ctx.mlflow,
                run_id,
                Path(attempt.log_path),
                f"attempt-{attempt.number}",
                previous=state or ParserState(),
                final=attempt.ended_at is not None,
            )
            added += logged
        if job.state.final:
            finish_run(ctx.mlflow, run_id, job.state.value)
    return run_id, added


def _guess_goal(key: str) -> Goal:
    name = key.lower()
    return Goal.min if any(word in name for word in _LOWER_IS_BETTER) else Goal.max


def _value(metric: Metric) -> MetricValue:
    value = metric.value
    if math.isfinite(value):
        return MetricValue(value=value, step=metric.step)
    return MetricValue(value=None, step=metric.step, nonfinite="nan" if math.isnan(value) else "inf" if value > 0 else "-inf")


def _summary(key: str, goal: Goal, history: list[Metric], max_points: int) -> MetricSummary:
    points = sorted(history, key=lambda m: (m.step, m.timestamp))
    finite = [i for i, m in enumerate(points) if math.isfinite(m.value)]
    best_index = None
    if finite:
        pick = min if goal is Goal.min else max
        best_index = pick(finite, key=lambda i: points[i].value)
    keep = _downsample(len(points), max_points, best_index)
    return MetricSummary(
        key=key,
        goal=goal,
        count=len(points),
        latest=_value(points[-1]),
        best=_value(points[best_index]) if best_index is not None else None,
        history=[(points[i].step, points[i].value if math.isfinite(points[i].value) else None) for i in keep],
    )


def _downsample(n: int, max_points: int, best: int | None) -> list[int]:
    """Evenly spaced indices of n points, at most max_points, always with first, last and best."""
    if n <= max_points:
        return list(range(n))

    def spaced(count: int) -> set[int]:
        return {round(i * (n - 1) / (count - 1)) for i in range(count)}

    chosen = spaced(max_points)
    if best is not None and best not in chosen:
        chosen = spaced(max_points - 1) | {best}
    return sorted(chosen)
