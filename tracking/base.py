"""The `Tracker` protocol: what the runner, the skills and usage logging need of a tracking store.

Records returned are frozen pydantic models of our own, so callers never touch MLflow entities.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from tracking.artifacts import ArtifactSource
from tracking.config import TrackingConfig
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint


class TrackingError(Exception):
    """The tracking store failed or refused a call; the message says which call and why."""


class RunNotFound(TrackingError):
    """No run with that id in the store."""

    def __init__(self, run_id: str, where: str) -> None:
        super().__init__(f"no run {run_id!r} in {where}: check the id, or the tracking URI "
                         "(--tracking-uri / MLFLOW_TRACKING_URI)")  # fmt: skip
        self.run_id = run_id


class RunStatus(str, enum.Enum):
    """The lifecycle state of a run (MLflow's names)."""

    RUNNING = "RUNNING"
    """Created and not ended yet."""
    FINISHED = "FINISHED"
    """Ended well."""
    FAILED = "FAILED"
    """Ended with an error."""
    KILLED = "KILLED"
    """Stopped from outside (cancelled, pruned)."""

    @property
    def final(self) -> bool:
        return self is not RunStatus.RUNNING


class LoggedMetric(BaseModel):
    """One stored metric value."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    key: str
    """The metric name."""
    value: float
    """The value (NaN and infinities are kept)."""
    step: int
    """The step it was logged at."""
    timestamp: int
    """When it was logged, in ms since the epoch (later wins among equal steps)."""


class RunView(BaseModel):
    """A run as one read saw it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    run_id: str
    """The run's id."""
    experiment_id: str
    """Its experiment."""
    name: str | None = None
    """The run name, if one was given."""
    status: RunStatus
    """RUNNING until `set_status` (or the job's own MLflow code) ended it."""
    tags: dict[str, str] = {}
    """Every tag of the run (names in `tracking.tags`)."""
    params: dict[str, str] = {}
    """Its parameters."""
    metrics: dict[str, float] = {}
    """The latest value of each metric logged."""
    start_time: int | None = None
    """When the run started, in ms since the epoch (a trial's: its job's first attempt's start)."""
    end_time: int | None = None
    """When it ended, in ms since the epoch; None while RUNNING."""


@runtime_checkable
class Tracker(Protocol):
    """A tracking store of experiments and runs.

    Rules every implementation keeps (`tracking.testing.tracker_suite` checks them):

    - `experiment(name)` returns the same id for the same name, creating it once (also when
      several clients race); `create_run` always makes a new RUNNING run.
    - `log` is one batch: its metrics (any number, in order), params and tags are all applied or the
      call raises. Tags overwrite; a param may be logged again only with the same value.
      Metric history keeps every point logged, duplicates included, in the order logged; but a
      point given with its `timestamp` is kept once per (key, step, timestamp, value), so a
      write applied again (`tracking.outbox`) adds nothing.
    - A read reflects every write that returned before it (wrappers that queue writes, like
      `QueuedTracker`, say so).
    - `set_status` ends a run with a final status, at `end_time` if given (else now);
      `delete_run` removes it from `find_runs`.
    - An unknown run id raises `RunNotFound`; any other store failure raises `TrackingError`
      (never a backend's own exception type).
    - Safe to call from several threads.
    """

    @property
    def config(self) -> TrackingConfig:
        """Where the runs live: jobs get its `tracking_uri` to log into their run."""
        ...

    def experiment(self, name: str) -> str:
        """The id of experiment `name`, created (with the config's artifact root) if absent."""
        ...

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        """A new RUNNING run in `experiment_id`; returns its id."""
        ...

    def get_run(self, run_id: str) -> RunView:
        """The run's status, tags, params and latest metrics."""
        ...

    def find_runs(
        self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None, limit: int = 1000
    ) -> list[str]:
        """Ids of the runs of `experiment_id` carrying all of `tags` (and in `status`, if given)."""
        ...

    def log(
        self,
        run_id: str,
        *,
        metrics: Sequence[MetricPoint] = (),
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """Log metrics, params and tags to a run in one batch."""
        ...

    def log_text(self, run_id: str, text: str, path: str) -> None:
        """Store `text` as the run's artifact `path` (e.g. `patch/trial-3.patch`)."""
        ...

    def log_artifact(self, run_id: str, source: ArtifactSource, path: str) -> None:
        """Store the text `source` renders (a log, a diff: read from its files now) as artifact `path`."""
        ...

    def metric_history(self, run_id: str, key: str) -> list[LoggedMetric]:
        """Every value of metric `key` in run `run_id` (empty when it has none)."""
        ...

    def log_datasets(self, run_id: str, datasets: Sequence[DatasetInput]) -> None:
        """Record the datasets a run reads (name, source path, digest), in order."""
        ...

    def datasets(self, run_id: str) -> list[DatasetInput]:
        """The datasets recorded on a run, in the order logged."""
        ...

    def set_status(self, run_id: str, status: RunStatus, *, end_time: int | None = None) -> None:
        """End a run with a final status (FINISHED, FAILED or KILLED), at `end_time` (ms since the
        epoch; a job's last attempt's end) or now."""
        ...

    def delete_run(self, run_id: str) -> None:
        """Delete a run nobody will log into."""
        ...


@runtime_checkable
class CreatesRuns(Protocol):
    """Optional: several new runs made in one call (`autoresearch.runner.run_pool` makes its spare
    runs so). Each run is the one `create_run(experiment_id, name=name, tags=tags)` would make."""

    @property
    def runs_in_bulk(self) -> bool:
        """Whether `create_runs` makes its runs in one store transaction, for about the cost of one
        `create_run` (a local SQLite MLflow store); else it costs one `create_run` each."""
        ...

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        """`n` new RUNNING runs in `experiment_id`; returns their ids. In bulk, none is made when the
        call raises."""
        ...


@runtime_checkable
class MovesRunStart(Protocol):
    """Optional: a run's recorded start moved to when its job started (a campaign makes its runs
    ahead of need, `autoresearch.runner.run_pool`). MLflow's API cannot move a start, so an MLflow
    store does it only where it writes the store itself (a local SQLite store: `SqliteBulk`)."""

    @property
    def moves_run_start(self) -> bool:
        """Whether `set_start_time` works on this store."""
        ...

    def set_start_time(self, run_id: str, start_time: int) -> None:
        """Record that run `run_id` started at `start_time` (ms since the epoch)."""
        ...
