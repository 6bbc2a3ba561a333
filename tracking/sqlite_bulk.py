"""`SqliteBulk`: the outbox's `log` and `set_status` writes of many runs applied to a local MLflow
SQLite store in one transaction.

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
- `set_status`: the run's status and end time.

A call this refuses is reported, not written; everything else of the batch is.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tracking.tags import RUN_NAME_TAG

BulkOp = tuple[str, str, dict[str, Any]]
"""(run id, `log` or `set_status`, the outbox row's payload)."""
_MAX_FLOAT = 1.7976931348623157e308


class SqliteBulk:
    """Applies `log` and `set_status` calls to the MLflow store in SQLite file `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def apply(self, ops: Sequence[BulkOp]) -> list[str]:
        """Write `ops` in one transaction; returns one error line per call refused."""
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.exceptions import MlflowException
        from mlflow.utils.validation import _validate_batch_log_data, _validate_batch_log_limits

        errors: list[str] = []
        db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            for run_id, kind, payload in ops:
                try:
                    self._check_active(db, run_id)
                    if kind == "set_status":
                        db.execute("UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                                   (payload["status"], int(time.time() * 1000), run_id))  # fmt: skip
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
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()
        return errors

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
