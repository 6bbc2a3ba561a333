"""The fetch_metrics skill: latest, best and a downsampled history of a run's metrics.

fetch_metrics is a read tool and never writes: a job's printed metrics the run lacks are
parsed from its log in memory (`from_log`), with the rules its campaign reads it with (the job's
`metric_rules` label: patterns, config lines, `record`), so the agent reads what the campaign
reads. Writing them into the run is `sync_metrics` (skills/metric_sync.py), a separate skill
never offered to the LLM policy: a read that wrote would make a campaign with
`objective.source: auto` read a stale value from MLflow.
A hidden holdout's value on a trial's run (`holdout/<metric>`, docs/results.md) is never returned.
"""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compute.records import Job
from skills.context import SkillContext
from skills.jobs import JobId
from skills.models import ErrorCode, SkillFailure, SkillInput, SkillOutput
from skills.views import tracking_errors, visible_job
from tracking import HOLDOUT_METRIC_PREFIX, RULES_LABEL, RUN_LABEL, LoggedMetric, MetricRules, read_log_points

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
    job_state: str | None = None
    """With job_id: the job's state (a run its script never ended stays RUNNING after the job ends)."""
    metrics: list[MetricSummary]
    missing: list[str] = []
    """Requested keys the run has no values for (yet)."""
    params: dict[str, str] = {}
    """The run's parameters."""
    from_log: list[str] = []
    """Metrics the run has none of, read from the lines the job printed (not written to the run); for a
    campaign's job, only what the campaign records, read as it reads them."""


def fetch_metrics(ctx: SkillContext, args: MetricsInput) -> FetchMetricsOutput:
    """Read metrics of an MLflow run (or of a job tied to one): latest, best and a downsampled history."""
    if (args.run_id is None) == (args.job_id is None):
        raise SkillFailure(ErrorCode.invalid_arguments, "give exactly one of run_id or job_id", field="run_id")
    job = run_of_job(ctx, args.job_id) if args.job_id is not None else None
    run_id = job.spec.labels[RUN_LABEL] if job is not None else args.run_id
    assert run_id is not None
    with tracking_errors(ctx):
        run = ctx.tracker.get_run(run_id)
        printed = _printed(job, run.metrics) if job is not None else {}
        shown = sorted(key for key in {*run.metrics, *printed} if not key.startswith(HOLDOUT_METRIC_PREFIX))
        keys = args.keys if args.keys is not None else shown[:MAX_KEYS]
        minimize, maximize = set(args.minimize or []), set(args.maximize or [])
        summaries, missing = [], []
        for key in keys:
            hidden = key.startswith(HOLDOUT_METRIC_PREFIX)  # a hidden holdout: for people, never for agents
            history = [] if hidden else ctx.tracker.metric_history(run_id, key) or printed.get(key, [])
            if not history:
                missing.append(key)
                continue
            goal = Goal.min if key in minimize else Goal.max if key in maximize else _guess_goal(key)
            summaries.append(_summary(key, goal, history, args.max_points))
    return FetchMetricsOutput(
        run_id=run_id,
        run_name=run.name,
        experiment_id=run.experiment_id,
        status=run.status.value,
        job_id=args.job_id,
        job_state=job.state.value if job is not None else None,
        metrics=summaries,
        missing=missing,
        params=run.params,
        from_log=sorted(key for key in printed if key in {s.key for s in summaries}),
    )


def run_of_job(ctx: SkillContext, job_id: str) -> Job:
    """The job, checked to be tied to a run (its `mlflow_run_id` label)."""
    job = visible_job(ctx, job_id)
    if RUN_LABEL not in job.spec.labels:
        raise SkillFailure(
            ErrorCode.not_found,
            f"job {job_id} is not tied to an MLflow run (submit_job with mlflow: {{experiment: ...}} ties one); "
            "give run_id instead",
            field="job_id",
        )
    return job


def rules_of(job: Job) -> MetricRules:
    """The rules the job's log is read with: its campaign's (`metric_rules` label), else the built-ins."""
    text = job.spec.labels.get(RULES_LABEL)
    if text is None:
        return MetricRules()
    try:
        return MetricRules.model_validate_json(text)
    except ValidationError as exc:
        raise SkillFailure(
            ErrorCode.invalid_arguments,
            f"job {job.id}: its label {RULES_LABEL} is not metric rules ({exc.errors()[0]['msg']}); "
            f"resubmit the job without that label, or with the JSON of tracking.MetricRules",
            field="job_id",
        ) from None


def _printed(job: Job, logged: dict[str, float]) -> dict[str, list[LoggedMetric]]:
    """The metrics the job printed that the run has no values of, parsed from its logs in memory."""
    logs = {a.number: Path(a.log_path) for a in job.attempts}
    found: dict[str, list[LoggedMetric]] = {}
    for order, p in enumerate(read_log_points(logs, final=job.state.final, rules=rules_of(job))):
        if p.key not in logged:
            found.setdefault(p.key, []).append(LoggedMetric(key=p.key, value=p.value, step=p.step, timestamp=order))
    return found


def _guess_goal(key: str) -> Goal:
    name = key.lower()
    return Goal.min if any(word in name for word in _LOWER_IS_BETTER) else Goal.max


def _value(metric: LoggedMetric) -> MetricValue:
    value = metric.value
    if math.isfinite(value):
        return MetricValue(value=value, step=metric.step)
    return MetricValue(value=None, step=metric.step, nonfinite="nan" if math.isnan(value) else "inf" if value > 0 else "-inf")


def _summary(key: str, goal: Goal, history: list[LoggedMetric], max_points: int) -> MetricSummary:
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
