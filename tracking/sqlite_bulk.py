"""`SqliteBulk`: the outbox's `log`, `set_status` and `set_start` writes of many runs applied to a local MLflow
SQLite store in one transaction, and new runs made several to a transaction.

MLflow's client commits each call on its own, with an fsync: a trial's metrics, tags and end
status cost two or three commits, 35-110 ms each on a loaded machine, and a 100-trial campaign's
backlog took 13 s to apply. Here they are one commit per batch, written the way MLflow's
SQLAlchemy store writes them (3.17; `tests/tracking/test_sqlite_bulk.py` checks the result
against the same writes through `MlflowClient`, read back through it):

- each call is validated by MLflow's own batch checks first (names, lengths, values);
- the run must exist and be active, as MLflow requires;
- `metrics`: one row per point (NaN stored as 0 with `is_nan`, infinities as +-max float), a
  point already stored (same key, step, timestamp, value) is kept once;
- `latest_metrics`: per key, the point with the greatest (step, timestamp, value);
- `params`: a param logged again must have the same value, else the call fails (nothing of it
  is written, as MLflow logs params first and stops there);
- `tags`: overwritten; `mlflow.runName` also renames the run;
- `set_status`: the run's status and end time (the payload's `end_time`, else now);
- `set_start`: the run's start time (MLflow's API has no call for it: runs made ahead of need get
  their job's start so);
- `move_artifact_uri`: the run's artifact URI (no API call either: a run whose job may run on another
  host gets the served store's artifact proxy, tracking/served.py).

A call this refuses is reported, not written; everything else of the batch is.

This is the one module that writes MLflow's tables, and only for the MLflow releases named in
`TESTED_MLFLOW` (the releases whose SQLAlchemy store it mirrors, checked by the tests above):
`SqliteBulk.of` checks the installed release once per process and, for another one, answers None
with one warning, so every write goes through MLflow's own client (slower, never a row MLflow
would not write).

`create_runs` makes `n` runs in one transaction, each with the rows MLflow's `create_run` writes
for `MlflowClient.create_run(experiment_id, run_name=name, tags=tags)`: the `runs` row (a
`uuid4().hex` id, source type UNKNOWN, user `mlflow.user` or `unknown`, the artifact URI
`<experiment's artifact location>/<run id>/artifacts`) and its `tags` rows, `mlflow.runName` added
(the name, or one of MLflow's random names). The spare runs of `autoresearch.runner.run_pool` cost
12-15 ms of CPU each through MLflow's client, ~4 ms made alone here and ~1.5 ms each in batches of
four (2 busy cores). It refuses what MLflow refuses (an experiment missing or deleted, a
`mlflow.runName` tag other than the name) and, unlike MLflow's `create_run`, tags its `log_batch`
would refuse (a bad key).
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import math
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compute.releases import tested_release
from tracking.tags import RUN_NAME_TAG

log = logging.getLogger("tracking")

TESTED_MLFLOW = ("3.17",)
"""The MLflow releases (major.minor) whose SQLite tables this module writes as their store does."""

BulkOp = tuple[str, str, dict[str, Any]]
"""(run id, `log`, `set_status` or `set_start`, the outbox row's payload)."""
_MAX_FLOAT = 1.7976931348623157e308


def mlflow_version() -> str:
    """The installed MLflow's version (from its metadata: MLflow is not imported)."""
    return importlib.metadata.version("mlflow")


@functools.cache
def tested_mlflow_installed() -> bool:
    """Whether the installed MLflow is a tested release (checked once per process; warns once if not)."""
    return tested_release("mlflow", mlflow_version(), TESTED_MLFLOW,
                          "tracking writes go through MLflow's client, one call at a time", log.name)  # fmt: skip


class SqliteBulk:
    """Applies `log`, `set_status` and `set_start` calls to the MLflow store in SQLite file `path`, and makes runs there."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of(cls, tracking_uri: str) -> SqliteBulk | None:
        """The bulk writer of a local SQLite store (`sqlite:///path`); None for any other store, and
        with an MLflow release not in `TESTED_MLFLOW` (its client then writes everything)."""
        if not tracking_uri.startswith("sqlite:///") or not tested_mlflow_installed():
            return None
        return cls(Path(tracking_uri.removeprefix("sqlite:///")))

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one write transaction: committed when the block ends, else rolled back."""
        db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()

    def apply(self, ops: Sequence[BulkOp]) -> list[str]:
        """Write `ops` in one transaction; returns one error line per call refused."""
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.exceptions import MlflowException
        from mlflow.utils.validation import _validate_batch_log_data, _validate_batch_log_limits

        errors: list[str] = []
        with self._transaction() as db:
            for run_id, kind, payload in ops:
                try:
                    self._check_active(db, run_id)
                    if kind == "set_status":
                        end = payload.get("end_time") or int(time.time() * 1000)
                        db.execute("UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                                   (payload["status"], end, run_id))  # fmt: skip
                        continue
                    if kind == "set_start":
                        db.execute("UPDATE runs SET start_time = ? WHERE run_uuid = ?", (payload["start_time"], run_id))
                        continue
                    metrics = [Metric(k, v, t, s) for k, v, s, t in payload["metrics"]]
                    params = [Param(k, str(v)) for k, v in payload["params"].items()]
                    tags = [RunTag(k, v) for k, v in payload["tags"].items()]
                    for start in range(0, max(len(metrics), 1), 1000):
                        chunk = metrics[start : start + 1000]
                        _validate_batch_log_data(chunk, params if start == 0 else [], tags if start == 0 else [])
                        _validate_batch_log_limits(chunk, params if start == 0 else [], tags if start == 0 else [])
                    self._params(db, run_id, payload["params"])
                    self._metrics(db, run_id, payload["metrics"])
                    self._tags(db, run_id, payload["tags"])
                except (MlflowException, _Refused) as exc:
                    errors.append(f"{kind} to run {run_id}: {getattr(exc, 'message', exc)}")
        return errors

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        """`n` new RUNNING runs of `experiment_id` made in one transaction, as `MlflowClient.create_run(
        experiment_id, run_name=name, tags=tags)` makes each; returns their ids. Raises MLflow's own
        `MlflowException` (and makes none) where MLflow refuses, or a tag is invalid."""
        from mlflow.entities import RunTag
        from mlflow.exceptions import MlflowException
        from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE, RESOURCE_DOES_NOT_EXIST
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
        from mlflow.utils.mlflow_tags import MLFLOW_USER
        from mlflow.utils.name_utils import _generate_random_name
        from mlflow.utils.uri import append_to_uri_path
        from mlflow.utils.validation import _parse_experiment_id, _validate_batch_log_data

        tags = dict(tags or {})
        _validate_batch_log_data([], [], [RunTag(k, v) for k, v in tags.items()])
        tagged_name = tags.get(RUN_NAME_TAG)
        if name and tagged_name and name != tagged_name:
            raise MlflowException("Both 'run_name' argument and 'mlflow.runName' tag are specified, but with "
                                  f"different values (run_name='{name}', mlflow.runName='{tagged_name}').",
                                  INVALID_PARAMETER_VALUE)  # fmt: skip
        number = _parse_experiment_id(experiment_id or SqlAlchemyStore.DEFAULT_EXPERIMENT_ID)
        with self._transaction() as db:
            found = db.execute("SELECT artifact_location, lifecycle_stage FROM experiments WHERE experiment_id = ?",
                               (number,)).fetchone()  # fmt: skip
            if found is None:
                raise MlflowException(f"No Experiment with id={number} exists", RESOURCE_DOES_NOT_EXIST)
            artifact_location, stage = found
            if stage != "active":
                raise MlflowException(f"The experiment {number} must be in the 'active' state. "
                                      f"Current state is {stage}.", INVALID_PARAMETER_VALUE)  # fmt: skip
            user, now = tags.get(MLFLOW_USER, "unknown"), int(time.time() * 1000)
            runs: list[tuple[str, str, str, int, str, int]] = []
            tag_rows: list[tuple[str, str, str]] = []
            for _ in range(n):
                run_id = uuid.uuid4().hex
                run_name = name or tagged_name or _generate_random_name()
                artifact_uri = append_to_uri_path(artifact_location, run_id, SqlAlchemyStore.ARTIFACTS_FOLDER_NAME)
                runs.append((run_id, run_name, user, now, artifact_uri, number))
                tag_rows += [(key, value, run_id) for key, value in tags.items()]
                if not tagged_name:
                    tag_rows.append((RUN_NAME_TAG, run_name, run_id))
            db.executemany("INSERT INTO runs (run_uuid, name, user_id, start_time, artifact_uri, experiment_id, "
                           "source_type, source_name, entry_point_name, status, end_time, source_version, "
                           "lifecycle_stage, deleted_time) "
                           "VALUES (?, ?, ?, ?, ?, ?, 'UNKNOWN', '', '', 'RUNNING', NULL, '', 'active', NULL)", runs)  # fmt: skip
            db.executemany("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)", tag_rows)
        return [run[0] for run in runs]

    def move_artifact_uri(self, run_id: str, old_root: str, new_root: str) -> bool:
        """Rewrite the run's artifact URI `old_root/REST` as `new_root/REST` (MLflow's API cannot change
        it); False when it is not under `old_root` (or the run is missing). Already moved: True."""
        with self._transaction() as db:
            row = db.execute("SELECT artifact_uri FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
            if row is None:
                return False
            uri = str(row[0])
            if uri.startswith(f"{new_root.rstrip('/')}/"):
                return True
            if not uri.startswith(f"{old_root.rstrip('/')}/"):
                return False
            moved = f"{new_root.rstrip('/')}/{uri[len(old_root.rstrip('/')) + 1:]}"
            db.execute("UPDATE runs SET artifact_uri = ? WHERE run_uuid = ?", (moved, run_id))
        return True

    @staticmethod
    def _check_active(db: sqlite3.Connection, run_id: str) -> None:
        row = db.execute("SELECT lifecycle_stage FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
        if row is None:
            raise _Refused(f"no run {run_id!r} in the store")
        if row[0] != "active":
            raise _Refused(f"the run {run_id} must be in the 'active' state. Current state is {row[0]}.")

    @staticmethod
    def _params(db: sqlite3.Connection, run_id: str, params: dict[str, str]) -> None:
        if not params:
            return
        marks = ",".join("?" * len(params))
        existing = dict(db.execute(f"SELECT key, value FROM params WHERE run_uuid = ? AND key IN ({marks})",
                                   (run_id, *params)).fetchall())  # fmt: skip
        changed = {k: (existing[k], str(v)) for k, v in params.items() if k in existing and existing[k] != str(v)}
        if changed:
            raise _Refused(f"Changing param values is not allowed: {changed} (old, new)")
        db.executemany("INSERT OR IGNORE INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
                       [(k, str(v), run_id) for k, v in params.items()])  # fmt: skip

    @staticmethod
    def _metrics(db: sqlite3.Connection, run_id: str, points: list[list[Any]]) -> None:
        if not points:
            return
        rows = [(key, *_sanitized(value), timestamp, step) for key, value, step, timestamp in points]
        db.executemany("INSERT OR IGNORE INTO metrics (key, is_nan, value, timestamp, step, run_uuid) "
                       "VALUES (?, ?, ?, ?, ?, ?)", [(*r, run_id) for r in rows])  # fmt: skip
        latest: dict[str, tuple[int, int, float, bool]] = {}
        for key, is_nan, value, timestamp, step in rows:
            if key not in latest or (step, timestamp, value) > latest[key][:3]:
                latest[key] = (step, timestamp, value, is_nan)
        db.executemany(
            "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value, timestamp = excluded.timestamp, "
            "step = excluded.step, is_nan = excluded.is_nan "
            "WHERE (excluded.step, excluded.timestamp, excluded.value) > (step, timestamp, value)",
            [(key, value, timestamp, step, is_nan, run_id) for key, (step, timestamp, value, is_nan) in latest.items()],
        )

    @staticmethod
    def _tags(db: sqlite3.Connection, run_id: str, tags: dict[str, str]) -> None:
        db.executemany("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?) "
                       "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value",
                       [(k, v, run_id) for k, v in tags.items()])  # fmt: skip
        if RUN_NAME_TAG in tags:
            db.execute("UPDATE runs SET name = ? WHERE run_uuid = ?", (tags[RUN_NAME_TAG], run_id))


class _Refused(Exception):
    """A call MLflow would refuse (unknown or deleted run, a param changed)."""


def _sanitized(value: float) -> tuple[bool, float]:
    """(is_nan, the value stored): MLflow's `sanitize_metric_value`."""
    if math.isnan(value):
        return True, 0.0
    if math.isinf(value):
        return False, _MAX_FLOAT if value > 0 else -_MAX_FLOAT
    return False, value
