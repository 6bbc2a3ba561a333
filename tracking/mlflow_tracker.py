"""`MlflowTracker`: the `Tracker` over an `MlflowClient` (any MLflow tracking URI).

mlflow is imported lazily: importing it costs ~1 s, and most callers never track.
"""

from __future__ import annotations

import json
import sqlite3
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracking.artifacts import ArtifactSource
from tracking.base import LoggedMetric, RunNotFound, RunStatus, RunView, TrackingError
from tracking.config import TrackingConfig
from tracking.sqlite_bulk import SqliteBulk
from tracking.sqlite_store import ensure_sqlite_store
from tracking.datasets import CONTEXT_TAG, DatasetInput
from tracking.logparse import MetricPoint
from tracking.served import local_artifact_dir

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

BATCH = 1000
"""MLflow's limit of metrics in one `log_batch`."""


def mlflow_client(config: TrackingConfig) -> MlflowClient:
    """An MlflowClient on the configured store (a local SQLite store is created whole, schema and
    all, by `ensure_sqlite_store`). The store stays in SQLite's default journal mode: WAL was
    tried twice and a resume test then found the shared store "malformed"."""
    # mlflow's SQLAlchemy store triggers SQLAlchemy deprecation warnings on first use.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mlflow\.store")
    from mlflow.tracking import MlflowClient

    if config.tracking_uri.startswith("sqlite:///"):
        db = Path(config.tracking_uri.removeprefix("sqlite:///"))
        ensure_sqlite_store(db, config.artifact_location)
    return MlflowClient(tracking_uri=config.tracking_uri)


class MlflowTracker:
    """A `Tracker` on an MLflow store; MLflow's errors come out as `TrackingError` / `RunNotFound`."""

    def __init__(self, config: TrackingConfig, client: MlflowClient | None = None, *, lazy: bool = False) -> None:
        self._config = config
        self._client = client if client is not None or lazy else mlflow_client(config)
        self._bulk = SqliteBulk.of(config.tracking_uri)

    @property
    def client(self) -> MlflowClient:
        """The underlying MlflowClient (for what the protocol does not cover); with `lazy`, made
        at first use (importing mlflow and opening the store cost seconds)."""
        if self._client is None:
            self._client = mlflow_client(self._config)
        return self._client

    def __repr__(self) -> str:
        return f"MlflowTracker({self._config.tracking_uri!r})"

    @property
    def config(self) -> TrackingConfig:
        return self._config

    @contextmanager
    def _errors(self, call: str, run_id: str | None = None) -> Iterator[None]:
        from mlflow.exceptions import MlflowException

        try:
            yield
        except MlflowException as exc:
            if run_id is not None and exc.error_code == "RESOURCE_DOES_NOT_EXIST":
                raise RunNotFound(run_id, self._config.tracking_uri) from exc
            raise TrackingError(f"MLflow {call} on {self._config.tracking_uri} failed: {exc.message}") from exc

    def experiment(self, name: str) -> str:
        from mlflow.exceptions import MlflowException

        with self._errors("get_experiment_by_name"):
            found = self.client.get_experiment_by_name(name)
            if found is not None:
                return found.experiment_id
            try:
                return self.client.create_experiment(name, artifact_location=self._config.artifact_location)
            except MlflowException:  # created concurrently by another client
                found = self.client.get_experiment_by_name(name)
                if found is None:
                    raise
                return found.experiment_id

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        with self._errors("create_run"):
            return self.client.create_run(experiment_id, run_name=name, tags=dict(tags or {})).info.run_id

    @property
    def runs_in_bulk(self) -> bool:
        """A local SQLite store: `create_runs` writes its runs in one transaction (`SqliteBulk`)."""
        return self._bulk is not None

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        """`n` runs as `create_run` makes them: in one transaction on a local SQLite store, else one by one."""
        if self._bulk is None:
            return [self.create_run(experiment_id, name=name, tags=tags) for _ in range(n)]
        _ = self.client  # the store exists, made whole (`mlflow_client`), before SQLite opens it
        with self._errors("create_runs"):
            try:
                return self._bulk.create_runs(experiment_id, n, name=name, tags=tags)
            except sqlite3.Error as exc:
                raise TrackingError(f"making {n} runs in {self._config.tracking_uri} failed: {exc}") from exc

    def get_run(self, run_id: str) -> RunView:
        with self._errors("get_run", run_id):
            run = self.client.get_run(run_id)
        return RunView(
            run_id=run.info.run_id, experiment_id=run.info.experiment_id, name=run.info.run_name,
            status=RunStatus(run.info.status), tags=dict(run.data.tags), params=dict(run.data.params),
            metrics=dict(run.data.metrics), start_time=run.info.start_time, end_time=run.info.end_time,
        )  # fmt: skip

    def find_runs(
        self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None, limit: int = 1000
    ) -> list[str]:
        terms = [f"tags.`{key}` = {_quoted(value)}" for key, value in tags.items()]
        if status is not None:
            terms.append(f"attributes.status = '{status.value}'")
        with self._errors("search_runs"):
            runs = self.client.search_runs([experiment_id], filter_string=" and ".join(terms), max_results=limit)
        return [r.info.run_id for r in runs]

    def log(
        self,
        run_id: str,
        *,
        metrics: Sequence[MetricPoint] = (),
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        entries = [Metric(p.key, p.value, now if p.timestamp is None else p.timestamp, p.step) for p in metrics]
        first: dict[str, Any] = {
            "params": [Param(k, str(v)) for k, v in (params or {}).items()],
            "tags": [RunTag(k, v) for k, v in (tags or {}).items()],
        }
        if not entries and not first["params"] and not first["tags"]:
            return
        with self._errors("log_batch", run_id):
            for start in range(0, max(len(entries), 1), BATCH):
                extra = first if start == 0 else {}
                self.client.log_batch(run_id, metrics=entries[start : start + BATCH], **extra)

    def log_text(self, run_id: str, text: str, path: str) -> None:
        with self._errors("log_text", run_id):
            folder = local_artifact_dir(self.client.get_run(run_id).info.artifact_uri, self._config)
            if folder is None:
                self.client.log_text(run_id, text, path)
                return
            target = folder / path  # a run whose job logs through the served store: its folder is here
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def log_artifact(self, run_id: str, source: ArtifactSource, path: str) -> None:
        self.log_text(run_id, source.render(), path)

    def metric_history(self, run_id: str, key: str) -> list[LoggedMetric]:
        with self._errors("get_metric_history", run_id):
            history = self.client.get_metric_history(run_id, key)
            if not history:
                self.client.get_run(run_id)  # MLflow answers [] for an unknown run too
        return [LoggedMetric(key=m.key, value=m.value, step=m.step, timestamp=m.timestamp) for m in history]

    def log_datasets(self, run_id: str, datasets: Sequence[DatasetInput]) -> None:
        """As MLflow dataset inputs (source type `local`; MLflow keeps 36 characters of the digest,
        the whole one is in the input's profile), each with its name as `mlflow.data.context`."""
        from mlflow.entities import Dataset, InputTag
        from mlflow.entities import DatasetInput as MlflowInput

        inputs = [
            MlflowInput(Dataset(name=d.name, digest=d.digest[:_MLFLOW_DIGEST_CHARS], source_type="local",
                                source=d.source, profile=json.dumps({"digest": d.digest})),
                        tags=[InputTag(CONTEXT_TAG, d.name)])
            for d in datasets
        ]  # fmt: skip
        if inputs:
            with self._errors("log_inputs", run_id):
                self.client.log_inputs(run_id, datasets=inputs)

    def datasets(self, run_id: str) -> list[DatasetInput]:
        with self._errors("get_run", run_id):
            run = self.client.get_run(run_id)
        inputs = run.inputs.dataset_inputs if run.inputs else []
        return [DatasetInput(name=i.dataset.name, source=i.dataset.source, digest=_full_digest(i.dataset))
                for i in inputs]  # fmt: skip

    def set_status(self, run_id: str, status: RunStatus, *, end_time: int | None = None) -> None:
        if not status.final:
            raise ValueError(f"set_status ends a run: give FINISHED, FAILED or KILLED, not {status.value}")
        with self._errors("set_terminated", run_id):
            self.client.set_terminated(run_id, status=status.value, end_time=end_time)

    @property
    def moves_run_start(self) -> bool:
        """A local SQLite store only: MLflow's API has no call that moves a run's start."""
        return self._bulk is not None

    def set_start_time(self, run_id: str, start_time: int) -> None:
        if self._bulk is None:
            raise TrackingError(f"MLflow's API cannot move a run's start ({self._config.tracking_uri} is no local "
                                "SQLite store): check `moves_run_start` first")  # fmt: skip
        self.get_run(run_id)  # RunNotFound; and the store exists, made whole, before SQLite opens it
        try:
            errors = self._bulk.apply([(run_id, "set_start", {"start_time": start_time})])
        except sqlite3.Error as exc:
            errors = [str(exc)]
        if errors:
            raise TrackingError(f"moving the start of run {run_id} in {self._config.tracking_uri} failed: {errors[0]}")

    def delete_run(self, run_id: str) -> None:
        with self._errors("delete_run", run_id):
            self.client.delete_run(run_id)


_MLFLOW_DIGEST_CHARS = 36
"""MLflow refuses longer dataset digests."""


def _full_digest(dataset: object) -> str:
    try:
        return str(json.loads(getattr(dataset, "profile", None) or "{}")["digest"])
    except (ValueError, KeyError, TypeError):
        return str(getattr(dataset, "digest", ""))


def _quoted(value: str) -> str:
    """A search-filter string literal: single quotes, or double quotes around a value with a `'`."""
    if "'" not in value:
        return f"'{value}'"
    if '"' in value:
        raise TrackingError(f"cannot search runs by a tag value with both quote characters: {value!r}")
    return f'"{value}"'

