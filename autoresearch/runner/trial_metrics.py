"""Reading a trial's objective while its job runs and once it ended.

Where the values come from is `objective.source`:

- `mlflow`: the metric history of the trial's MLflow run (the job logs into it itself);
- `log`: `key: value` / JSON lines of the job's log (`skills.logmetrics.parse_metrics`),
  read from an in-memory parse, and logged into the run with one `log_batch` per read that
  also stores the parser state in the run tag `autoresearch.log_parser.attemptN` (what
  `sync_log_metrics` keeps), so a restarted runner goes on where the last one stopped;
- `auto`: `mlflow` as soon as the run has any metric the job logged, else `log` once the
  log holds the objective at two steps (or the job ended). Until then nothing is logged, so
  a job that prints a line just before logging it to MLflow is not recorded twice.
  The choice is kept in the run tag `autoresearch.metric_source`.

Every batch also carries the caller's tags (the job id), so tagging costs no extra call.
Batches go through the runner's `MlflowWriter`; the values returned never wait for them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skills.logmetrics import STATE_TAG, MetricPoint, ParserState, parse_metrics

from autoresearch.campaign import MetricSource, Objective
from autoresearch.runner.mlflow_writer import MlflowWriter
from compute import Job

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

SOURCE_TAG = "autoresearch.metric_source"
"""Run tag: `mlflow` or `log`, where the runner reads the trial's objective."""


@dataclass
class _Trial:
    source: MetricSource | None = None
    sizes: dict[int, int] = field(default_factory=dict)
    local: dict[int, ParserState] = field(default_factory=dict)
    """Per attempt: how far the log was parsed for values."""
    values: dict[int, float] = field(default_factory=dict)
    synced: dict[int, ParserState] = field(default_factory=dict)
    """Per attempt: how far the log was logged into MLflow (from the run tag after a restart)."""
    resumed: bool = False
    """An earlier runner logged some of this trial's lines: the first batch skips points the run has."""
    job_metrics: bool | None = None
    """Whether the run had metrics when last read (None: read it again before deciding)."""


class MetricReader:
    """The objective history of each running trial of one campaign (one reader per runner)."""

    def __init__(self, mlflow: MlflowClient, objective: Objective, writer: MlflowWriter) -> None:
        self.mlflow = mlflow
        self.objective = objective
        self.writer = writer
        """Batches go through it (in order, off the runner's path); reads are direct."""
        self._trials: dict[int, _Trial] = {}

    def read(
        self, number: int, run_id: str, job: Job, *, final: bool = False, tags: Mapping[str, str] | None = None
    ) -> list[tuple[int, float]]:
        """(step, value) of the objective so far, by step; with `final` the job has ended.
        `tags` are set on the run with the next write (always by the final read)."""
        seen = self._trials.get(number) or self._first_sight(number, run_id)
        logs = {a.number: Path(a.log_path) for a in job.attempts}
        sizes = {n: _size(p) for n, p in logs.items()}
        changed = final or sizes != seen.sizes
        if changed:
            self._parse_locally(seen, logs, sizes, final)
            seen.sizes = sizes
        fresh_tags = dict(tags or {})
        if seen.source is None:
            seen.source = self._decide(seen, run_id, final)
            if seen.source is not None:
                fresh_tags[SOURCE_TAG] = seen.source.value
        if seen.source is MetricSource.log and changed:
            self._sync(seen, run_id, logs, final, fresh_tags)
        elif fresh_tags and (final or SOURCE_TAG in fresh_tags):
            self._write(run_id, [], fresh_tags)
        if seen.source is MetricSource.mlflow:
            return self._history(run_id)
        return sorted(seen.values.items())

    def forget(self, number: int) -> None:
        """Drop what is remembered about an ended trial."""
        self._trials.pop(number, None)

    def _first_sight(self, number: int, run_id: str) -> _Trial:
        """What earlier runners recorded on the run: the source chosen and the parser states."""
        run = self.mlflow.get_run(run_id)
        tags = run.data.tags
        seen = _Trial(job_metrics=bool(run.data.metrics))
        if self.objective.source is not MetricSource.auto:
            seen.source = self.objective.source
        elif tags.get(SOURCE_TAG):
            seen.source = MetricSource(tags[SOURCE_TAG])
        prefix = f"{STATE_TAG}.attempt"
        for key, value in tags.items():
            if key.startswith(prefix) and key[len(prefix) :].isdigit():
                seen.synced[int(key[len(prefix) :])] = ParserState.model_validate_json(value)
        seen.resumed = bool(seen.synced)
        self._trials[number] = seen
        return seen

    def _decide(self, seen: _Trial, run_id: str, final: bool) -> MetricSource | None:
        """`auto`: the source to lock in, or None while it cannot tell yet."""
        has_metrics = seen.job_metrics
        if has_metrics is None:
            has_metrics = bool(self.mlflow.get_run(run_id).data.metrics)
        seen.job_metrics = None
        if has_metrics:
            return MetricSource.mlflow
        if final or len(seen.values) >= 2:
            return MetricSource.log
        return None

    def _parse_locally(self, seen: _Trial, logs: dict[int, Path], sizes: dict[int, int], final: bool) -> None:
        for attempt, path in logs.items():
            result = _parse(path, sizes[attempt], seen.local.get(attempt), final)
            if result is not None:
                seen.local[attempt] = result[1]
                for point in result[0]:
                    if point.key == self.objective.metric:
                        seen.values[point.step] = point.value

    def _sync(self, seen: _Trial, run_id: str, logs: dict[int, Path], final: bool, tags: dict[str, str]) -> None:
        """Log the lines not logged yet, with the new parser states, in one batch."""
        points: list[MetricPoint] = []
        for attempt, path in logs.items():
            result = _parse(path, seen.sizes[attempt], seen.synced.get(attempt), final)
            if result is not None and result[1] != seen.synced.get(attempt):
                points += result[0]
                seen.synced[attempt] = result[1]
                tags[f"{STATE_TAG}.attempt{attempt}"] = result[1].model_dump_json()
        if seen.resumed and points:  # a runner killed inside its last batch may have logged some
            history = self.mlflow.get_metric_history
            logged = {k: {(m.step, m.value) for m in history(run_id, k)} for k in {p.key for p in points}}
            points = [p for p in points if (p.step, p.value) not in logged[p.key]]
            seen.resumed = False
        self._write(run_id, points, tags)

    def _write(self, run_id: str, points: list[MetricPoint], tags: Mapping[str, str]) -> None:
        from mlflow.entities import Metric, RunTag

        if not points and not tags:
            return
        now = int(time.time() * 1000)
        metrics = [Metric(p.key, p.value, now, p.step) for p in points]
        for start in range(0, max(len(metrics), 1), 1000):
            batch_tags = [RunTag(k, v) for k, v in tags.items()] if start == 0 else []
            self.writer.submit(self.mlflow.log_batch, run_id, metrics=metrics[start : start + 1000], tags=batch_tags)

    def _history(self, run_id: str) -> list[tuple[int, float]]:
        latest: dict[int, tuple[int, float]] = {}
        for m in self.mlflow.get_metric_history(run_id, self.objective.metric):
            if m.step not in latest or m.timestamp >= latest[m.step][0]:
                latest[m.step] = (m.timestamp, m.value)
        return sorted((step, value) for step, (_, value) in latest.items())


def _parse(
    path: Path, size: int, state: ParserState | None, final: bool
) -> tuple[list[MetricPoint], ParserState] | None:
    """Parse the bytes of `path` after `state.offset`; None when there is nothing new."""
    state = state or ParserState()
    if size < 0 or (size <= state.offset and not final):
        return None
    with path.open("rb") as f:
        f.seek(state.offset)
        result = parse_metrics(f.read(max(0, size - state.offset)), state, final=final)
    return result.points, result.state


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
