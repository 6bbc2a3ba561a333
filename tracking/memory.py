"""`InMemoryTracker`: a `Tracker` in a dict, for tests and for runs nobody needs to keep."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping, Sequence

from tracking.artifacts import ArtifactSource
from tracking.base import LoggedMetric, RunNotFound, RunStatus, RunView, TrackingError
from tracking.config import TrackingConfig
from tracking.datasets import DatasetInput
from tracking.logparse import MetricPoint


class InMemoryTracker:
    """Keeps experiments, runs, metric histories and text artifacts in memory (thread-safe)."""

    def __init__(self, config: TrackingConfig | None = None) -> None:
        self._config = config or TrackingConfig(tracking_uri="memory://")
        self._lock = threading.Lock()
        self._experiments: dict[str, str] = {}
        self._runs: dict[str, RunView] = {}
        self._history: dict[tuple[str, str], list[LoggedMetric]] = {}
        self._deleted: set[str] = set()
        self._datasets: dict[str, list[DatasetInput]] = {}
        self.artifacts: dict[tuple[str, str], str] = {}
        """(run id, path) -> text of each artifact logged."""

    def __repr__(self) -> str:
        return f"InMemoryTracker({len(self._runs)} runs)"

    @property
    def config(self) -> TrackingConfig:
        return self._config

    def experiment(self, name: str) -> str:
        with self._lock:
            return self._experiments.setdefault(name, str(len(self._experiments)))

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        with self._lock:
            if experiment_id not in self._experiments.values():
                raise TrackingError(f"no experiment {experiment_id!r} in {self._config.tracking_uri}")
            run_id = uuid.uuid4().hex
            self._runs[run_id] = RunView(run_id=run_id, experiment_id=experiment_id, name=name, status=RunStatus.RUNNING,
                                         tags=dict(tags or {}), start_time=int(time.time() * 1000))  # fmt: skip
            return run_id

    def _run(self, run_id: str) -> RunView:
        run = self._runs.get(run_id)
        if run is None:
            raise RunNotFound(run_id, self._config.tracking_uri)
        return run

    def get_run(self, run_id: str) -> RunView:
        with self._lock:
            return self._run(run_id)

    def find_runs(
        self, experiment_id: str, tags: Mapping[str, str], *, status: RunStatus | None = None, limit: int = 1000
    ) -> list[str]:
        with self._lock:
            found = [
                r.run_id for r in self._runs.values()
                if r.experiment_id == experiment_id and r.run_id not in self._deleted
                and all(r.tags.get(k) == v for k, v in tags.items()) and (status is None or r.status is status)
            ]  # fmt: skip
        return found[:limit]

    def log(
        self,
        run_id: str,
        *,
        metrics: Sequence[MetricPoint] = (),
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        with self._lock:
            run = self._run(run_id)
            new_params = {k: str(v) for k, v in (params or {}).items()}
            for key, value in new_params.items():
                if run.params.get(key, value) != value:
                    raise TrackingError(f"run {run_id}: param {key!r} is {run.params[key]!r}, cannot log {value!r}")
            latest = dict(run.metrics)
            now = int(time.time() * 1000)
            for point in metrics:
                stamp = now if point.timestamp is None else point.timestamp
                entry = LoggedMetric(key=point.key, value=point.value, step=point.step, timestamp=stamp)
                history = self._history.setdefault((run_id, point.key), [])
                if point.timestamp is not None and entry in history:
                    continue  # the same stamped point again (a replayed write): kept once, as MLflow does
                history.append(entry)
                latest[point.key] = max(history, key=lambda m: (m.step, m.timestamp)).value
            self._runs[run_id] = run.model_copy(update={
                "params": {**run.params, **new_params}, "tags": {**run.tags, **(tags or {})}, "metrics": latest,
            })  # fmt: skip

    def log_text(self, run_id: str, text: str, path: str) -> None:
        with self._lock:
            self._run(run_id)
            self.artifacts[(run_id, path)] = text

    def log_artifact(self, run_id: str, source: ArtifactSource, path: str) -> None:
        self.log_text(run_id, source.render(), path)

    def metric_history(self, run_id: str, key: str) -> list[LoggedMetric]:
        with self._lock:
            self._run(run_id)
            return list(self._history.get((run_id, key), []))

    def log_datasets(self, run_id: str, datasets: Sequence[DatasetInput]) -> None:
        with self._lock:
            self._run(run_id)
            self._datasets.setdefault(run_id, []).extend(datasets)

    def datasets(self, run_id: str) -> list[DatasetInput]:
        with self._lock:
            self._run(run_id)
            return list(self._datasets.get(run_id, []))

    def set_status(self, run_id: str, status: RunStatus, *, end_time: int | None = None) -> None:
        if not status.final:
            raise ValueError(f"set_status ends a run: give FINISHED, FAILED or KILLED, not {status.value}")
        end = int(time.time() * 1000) if end_time is None else end_time
        with self._lock:
            self._runs[run_id] = self._run(run_id).model_copy(update={"status": status, "end_time": end})

    @property
    def moves_run_start(self) -> bool:
        return True

    def set_start_time(self, run_id: str, start_time: int) -> None:
        with self._lock:
            self._runs[run_id] = self._run(run_id).model_copy(update={"start_time": start_time})

    def delete_run(self, run_id: str) -> None:
        with self._lock:
            self._run(run_id)
            self._deleted.add(run_id)
