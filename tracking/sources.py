"""Reading a trial's objective while its job runs and once it ended: metric sources.

Where the values come from is a `MetricSource`, each a small class behind `ObjectiveSource`:

- `LogSource`: `key: value` / JSON lines of the job's attempt logs, parsed in memory for the
  values, and logged into the run by the one `LogSync`; a reader that starts on a run holding
  metrics (a restarted runner) parses the logs again and logs only what the run lacks;
- `MlflowSource`: the metric history of the run (the job logs into it itself);
- `AutoSource`: `mlflow` as soon as the run has any metric the job logged, else `log` once the
  log holds the objective at two steps (or the job ended). Until then nothing is written, so a
  job that prints a line just before logging it to MLflow is not recorded twice. The choice is
  kept in the run tag `SOURCE_TAG` and never changes. The decision is only sound if nothing but
  the job and this reader writes the run's metrics: the agent's read tools never write.

`MetricReader` keeps one source per running trial. Caller tags (the job id) ride on the next
write, and are written at once by a final read; a tracker that queues writes never delays a read.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from compute.records import Job
from tracking.base import RunStatus, RunView, Tracker
from tracking.logparse import ParserState
from tracking.logrules import MetricRules
from tracking.logsync import MAX_READ_BYTES, LogSync, Parsed, log_size, parse_attempts
from tracking.tags import SOURCE_TAG


class MetricSource(str, enum.Enum):
    """Where a trial's objective metric is read from."""

    auto = "auto"
    """The trial run's MLflow metrics if the job logged any, else its log."""
    mlflow = "mlflow"
    """The metric history of the trial's MLflow run."""
    log = "log"
    """`key: value` lines or JSON lines in the job's log."""


class LogScan:
    """The objective values of one trial's logs, parsed in memory as they grow (attempts are
    chained the way `LogSync` chains them, so the values match the points it logs)."""

    def __init__(self, metric: str, rules: MetricRules | None = None) -> None:
        self.metric = metric
        self.rules = (rules or MetricRules()).model_copy(update={"record": None})
        """The log's rules, every metric kept: the scan also sees what is not recorded."""
        self.seen: set[str] = set()
        """Every metric name the logs hold so far (what a trial that never reported its metric printed)."""
        self.logs: dict[int, Path] = {}
        self.sizes: dict[int, int] = {}
        """Per attempt: the log size the values were read up to."""
        self.values: dict[int, float] = {}
        """step -> the objective's last value at that step."""
        self.changed = False
        """Whether the last `update` found new bytes (or was final)."""
        self.parsed: dict[int, Parsed] = {}
        """Per attempt, what the last `update` parsed (every metric): `LogSync` reuses it instead of
        parsing the same bytes again when it starts from the same state."""
        self._states: dict[int, ParserState] = {}

    def update(self, logs: Mapping[int, Path], final: bool) -> None:
        sizes = {n: log_size(p) for n, p in logs.items()}
        self.changed = final or sizes != self.sizes
        self.parsed = {}
        if not self.changed:
            return
        self.parsed = parse_attempts(logs, self._states, sizes=sizes, final=final, rules=self.rules,
                                     max_bytes=None if final else MAX_READ_BYTES)  # fmt: skip
        for attempt, (_, result) in self.parsed.items():
            if result is not None:
                self._states[attempt] = result.state
                self.values.update((p.step, p.value) for p in result.points if p.key == self.metric)
                self.seen.update(p.key for p in result.points)
        self.logs, self.sizes = dict(logs), sizes


class ObjectiveSource(Protocol):
    """One trial's objective values. `read` returns (step, value) pairs sorted by step, the values
    seen so far; it writes to the tracker only what the source owns (a log source its points),
    plus `tags` (with the next write; at once when `final` or when they carry `SOURCE_TAG`)."""

    def read(self, scan: LogScan, *, final: bool, tags: Mapping[str, str]) -> list[tuple[int, float]]: ...


def _write_tags(tracker: Tracker, run_id: str, tags: Mapping[str, str], final: bool) -> None:
    if tags and (final or SOURCE_TAG in tags):
        tracker.log(run_id, tags=tags)


class LogSource:
    """Values from the job's logs; the new lines are logged into the run."""

    def __init__(self, tracker: Tracker, run: RunView, rules: MetricRules | None = None) -> None:
        self.tracker = tracker
        self.run_id = run.run_id
        self.sync = LogSync(tracker, run.run_id, rules)
        self._resumed = bool(run.metrics)
        """An earlier reader logged some lines: the first batch skips points the run has."""

    def read(self, scan: LogScan, *, final: bool, tags: Mapping[str, str]) -> list[tuple[int, float]]:
        if scan.changed:
            self.sync.sync(scan.logs, final=final, sizes=scan.sizes, skip_logged=self._resumed, tags=tags,
                           parsed=scan.parsed)  # fmt: skip
            self._resumed = False
        else:
            _write_tags(self.tracker, self.run_id, tags, final)
        return sorted(scan.values.items())


class MlflowSource:
    """Values from the run's metric history (the last logged value of each step)."""

    def __init__(self, tracker: Tracker, run: RunView, metric: str) -> None:
        self.tracker = tracker
        self.run_id = run.run_id
        self.metric = metric

    def read(self, scan: LogScan, *, final: bool, tags: Mapping[str, str]) -> list[tuple[int, float]]:
        _write_tags(self.tracker, self.run_id, tags, final)
        latest: dict[int, tuple[int, float]] = {}
        for m in self.tracker.metric_history(self.run_id, self.metric):
            if m.step not in latest or m.timestamp >= latest[m.step][0]:
                latest[m.step] = (m.timestamp, m.value)
        return sorted((step, value) for step, (_, value) in latest.items())


class AutoSource:
    """`mlflow` once the run has metrics, else `log` once the log is clear; locked in `SOURCE_TAG`."""

    def __init__(self, tracker: Tracker, run: RunView, metric: str, rules: MetricRules | None = None) -> None:
        self.tracker = tracker
        self.run = run
        self.metric = metric
        self.rules = rules
        self.chosen: ObjectiveSource | None = None
        self._run_has_metrics: bool | None = bool(run.metrics)
        """Whether the run had metrics when last read (None: read it again before deciding)."""

    def read(self, scan: LogScan, *, final: bool, tags: Mapping[str, str]) -> list[tuple[int, float]]:
        if self.chosen is None:
            kind = self._decide(scan, final)
            if kind is None:
                return sorted(scan.values.items())
            self.chosen = source_of(kind, self.tracker, self.run, self.metric, self.rules)
            tags = {**tags, SOURCE_TAG: kind.value}
        return self.chosen.read(scan, final=final, tags=tags)

    def _decide(self, scan: LogScan, final: bool) -> MetricSource | None:
        has_metrics = self._run_has_metrics
        if has_metrics is None:
            has_metrics = bool(self.tracker.get_run(self.run.run_id).metrics)
        self._run_has_metrics = None
        if has_metrics:
            return MetricSource.mlflow
        if final or len(scan.values) >= 2:
            return MetricSource.log
        return None


def source_of(
    kind: MetricSource, tracker: Tracker, run: RunView, metric: str, rules: MetricRules | None = None
) -> ObjectiveSource:
    """The source for `kind` on `run` (as first read); `auto` goes on with a choice stored on the run.
    `rules`: how a log source reads the log and which of its metrics it logs."""
    if kind is MetricSource.auto and run.tags.get(SOURCE_TAG):
        kind = MetricSource(run.tags[SOURCE_TAG])
    if kind is MetricSource.log:
        return LogSource(tracker, run, rules)
    if kind is MetricSource.mlflow:
        return MlflowSource(tracker, run, metric)
    return AutoSource(tracker, run, metric, rules)


class MetricReader:
    """The objective history of each running trial of one campaign (one reader per runner)."""

    def __init__(self, tracker: Tracker, metric: str, source: MetricSource, rules: MetricRules | None = None) -> None:
        self.tracker = tracker
        """Writes go through it (a `QueuedTracker` keeps them off the runner's path)."""
        self.metric = metric
        self.source = source
        self.rules = rules
        """How the logs are read, and which metrics are logged from them (None: built-ins, all)."""
        self._trials: dict[int, tuple[LogScan, ObjectiveSource]] = {}

    def read(
        self,
        number: int,
        run_id: str,
        job: Job,
        *,
        final: bool = False,
        tags: Mapping[str, str] | None = None,
        new_run: bool = False,
    ) -> list[tuple[int, float]]:
        """(step, value) of the objective so far, by step; with `final` the job has ended.
        `tags` are set on the run with the next write (always by the final read).
        `new_run`: the run was made for this trial by the caller's process, so no reader stored
        parser states or a source choice on it; a `log` or `mlflow` source then starts without
        reading the run back (`auto` reads it: it must see whether the job logged metrics)."""
        if number not in self._trials:
            if new_run and self.source is not MetricSource.auto:
                run = RunView(run_id=run_id, experiment_id="", status=RunStatus.RUNNING)  # nothing stored on it yet
            else:
                run = self.tracker.get_run(run_id)
            self._trials[number] = (
                LogScan(self.metric, self.rules),
                source_of(self.source, self.tracker, run, self.metric, self.rules),
            )
        scan, source = self._trials[number]
        scan.update({a.number: Path(a.log_path) for a in job.attempts}, final)
        return source.read(scan, final=final, tags=dict(tags or {}))

    def seen(self, number: int) -> list[str]:
        """The metric names trial `number`'s logs held when last read (recorded or not), sorted."""
        return sorted(self._trials[number][0].seen) if number in self._trials else []

    def forget(self, number: int) -> None:
        """Drop what is remembered about an ended trial."""
        self._trials.pop(number, None)
