"""Reading a trial's objective while its job runs and once it ended.

Where the values come from is `objective.source`:

- `mlflow`: the metric history of the trial's MLflow run (the job logs into it itself);
- `log`: `key: value` / JSON lines of the job's log, parsed incrementally and logged into
  the run (`skills.logmetrics.sync_log_metrics`, whose parser state lives in a run tag, so a
  restarted runner logs each line once);
- `auto`: `mlflow` as soon as the run has any metric the job logged, else `log` once the
  log holds the objective at two steps (or the job ended). Until then the log is parsed in
  memory only, so a job that prints a line just before logging it is not logged twice.
  The choice is kept in the run tag `autoresearch.metric_source`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skills.logmetrics import ParserState, parse_metrics, sync_log_metrics

from autoresearch.campaign import MetricSource, Objective
from compute import Job

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

SOURCE_TAG = "autoresearch.metric_source"
"""Run tag: `mlflow` or `log`, where the runner reads the trial's objective."""


@dataclass
class _Trial:
    source: MetricSource | None = None
    sizes: dict[int, int] = field(default_factory=dict)
    parsed: dict[int, ParserState] = field(default_factory=dict)
    local: dict[int, float] = field(default_factory=dict)
    values: list[tuple[int, float]] = field(default_factory=list)


class MetricReader:
    """The objective history of each running trial of one campaign (one reader per runner)."""

    def __init__(self, mlflow: MlflowClient, objective: Objective) -> None:
        self.mlflow = mlflow
        self.objective = objective
        self._trials: dict[int, _Trial] = {}

    def read(self, number: int, run_id: str, job: Job, *, final: bool = False) -> list[tuple[int, float]]:
        """(step, value) of the objective so far, by step; with `final` the job has ended."""
        seen = self._trials.setdefault(number, _Trial())
        logs = {a.number: Path(a.log_path) for a in job.attempts}
        sizes = {n: _size(p) for n, p in logs.items()}
        if seen.source is None:
            seen.source = self._decide(seen, run_id, logs, sizes, final)
        if seen.source is None:
            return sorted(seen.local.items())
        if seen.source is MetricSource.log:
            if sizes == seen.sizes and not final and seen.values:
                return seen.values
            for attempt, path in logs.items():
                sync_log_metrics(self.mlflow, run_id, path, f"attempt{attempt}", final=final)
        seen.sizes = sizes
        history = self.mlflow.get_metric_history(run_id, self.objective.metric)
        latest: dict[int, tuple[int, float]] = {}
        for m in history:
            if m.step not in latest or m.timestamp >= latest[m.step][0]:
                latest[m.step] = (m.timestamp, m.value)
        seen.values = sorted((step, value) for step, (_, value) in latest.items())
        return seen.values

    def forget(self, number: int) -> None:
        """Drop what is remembered about an ended trial."""
        self._trials.pop(number, None)

    def _decide(
        self, seen: _Trial, run_id: str, logs: dict[int, Path], sizes: dict[int, int], final: bool
    ) -> MetricSource | None:
        """The source to lock in for this trial, or None while `auto` cannot tell yet."""
        configured = self.objective.source
        if configured is not MetricSource.auto:
            return configured
        run = self.mlflow.get_run(run_id)
        stored = run.data.tags.get(SOURCE_TAG)
        if stored:
            return MetricSource(stored)
        chosen: MetricSource | None = None
        if run.data.metrics:
            chosen = MetricSource.mlflow
        else:
            self._parse_locally(seen, logs, sizes, final)
            if final or len(seen.local) >= 2:
                chosen = MetricSource.log
        if chosen is not None:
            self.mlflow.set_tag(run_id, SOURCE_TAG, chosen.value)
        return chosen

    def _parse_locally(self, seen: _Trial, logs: dict[int, Path], sizes: dict[int, int], final: bool) -> None:
        for attempt, path in logs.items():
            state = seen.parsed.get(attempt, ParserState())
            if sizes[attempt] < 0 or (sizes[attempt] <= state.offset and not final):
                continue
            with path.open("rb") as f:
                f.seek(state.offset)
                result = parse_metrics(f.read(), state, final=final)
            seen.parsed[attempt] = result.state
            for point in result.points:
                if point.key == self.objective.metric:
                    seen.local[point.step] = point.value


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def log_tail(path: str | None, limit: int = 2000) -> str:
    """The last `limit` characters of a log (empty when there is none)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
