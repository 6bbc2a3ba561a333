"""`LedgerReader`: a campaign's ledger read straight from its SQLite file with plain sqlite3
(read-only), for readers that must answer quickly (the dashboard).

`Ledger.load(...).trials()` goes through Optuna's `RDBStorage` (an engine, a schema check, ORM
objects per row): about a second for 1k trials. This reads the same rows with a handful of
queries and builds the same `FrozenTrial`s as `RDBStorage` does, then the same `TrialRecord`s
(`trial_record`, the ledger's one mapping). The SQL is optuna's own tables (its SQLAlchemy
models, as `_mirror.py` writes them), compiled once for SQLite and run through sqlite3, and
each column is decoded by its SQLAlchemy type (`TrialState` names, `DATETIME` text).

Rules:

- **Finished trials never change**: Optuna refuses every write to a trial that ended (and so
  does `_mirror.py`'s batch write). A reader keeps them and, on each `read`, fetches only the
  trials that are new or were unfinished last time: a read after one ledger write costs what
  changed, not what the ledger holds.
- **One snapshot per read**: all queries of a `read` run in one read transaction (WAL: never
  blocks the writer, never sees half a commit).
- **Same trials as a reader ledger**: a proposed trial whose parameters are not all committed yet
  is left out, as `Ledger.load(...).trials()` leaves it out (`half_drawn`).
- A campaign started over (its file replaced, or a study with another `started_at`) drops what
  was kept and is read afresh.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import sqlalchemy
from optuna.distributions import BaseDistribution, json_to_distribution
from optuna.storages._rdb import models
from optuna.trial import FrozenTrial
from sqlalchemy.dialects import sqlite as sqlite_dialect

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.ledger._integrity import check_not_lost, no_campaign, sqlite_errors, study_missing
from autoresearch.campaign.ledger._optuna_store import (
    CONFIG_ATTR,
    facts_from_attrs,
    half_drawn,
    schema_lock,
    storage_url,
    trial_record,
)
from autoresearch.campaign.ledger.facts import CampaignFacts
from autoresearch.campaign.paths import CampaignPaths
from autoresearch.campaign.records import TrialRecord

_DIALECT = sqlite_dialect.dialect()
_STUDIES, _STUDY_ATTRS = models.StudyModel.__table__, models.StudyUserAttributeModel.__table__
_TRIALS, _VALUES = models.TrialModel.__table__, models.TrialValueModel.__table__
_PARAMS, _STEPS = models.TrialParamModel.__table__, models.TrialIntermediateValueModel.__table__
_USER, _SYSTEM = models.TrialUserAttributeModel.__table__, models.TrialSystemAttributeModel.__table__


def _of_trials(table: Any) -> Any:
    """`table.trial_id IN` the JSON array bound as `ids` (one statement for any number of ids)."""
    ids: Any = sqlalchemy.select(sqlalchemy.column("value"))
    return table.c.trial_id.in_(ids.select_from(sqlalchemy.func.json_each(sqlalchemy.bindparam("ids"))))


_STUDY = sqlalchemy.select(_STUDIES.c.study_id).where(_STUDIES.c.study_name == sqlalchemy.bindparam("name"))
_ATTRS = sqlalchemy.select(_STUDY_ATTRS.c.key, _STUDY_ATTRS.c.value_json).where(
    _STUDY_ATTRS.c.study_id == sqlalchemy.bindparam("study")
)
_TRIAL_ROWS = (
    sqlalchemy.select(_TRIALS.c.trial_id, _TRIALS.c.number, _TRIALS.c.state, _TRIALS.c.datetime_start,
                      _TRIALS.c.datetime_complete)
    .where(_TRIALS.c.study_id == sqlalchemy.bindparam("study")).order_by(_TRIALS.c.trial_id)
)  # fmt: skip
_TRIAL_VALUES = sqlalchemy.select(_VALUES.c.trial_id, _VALUES.c.objective, _VALUES.c.value, _VALUES.c.value_type).where(
    _of_trials(_VALUES)
)
_TRIAL_PARAMS = (
    sqlalchemy.select(_PARAMS.c.trial_id, _PARAMS.c.param_name, _PARAMS.c.param_value, _PARAMS.c.distribution_json)
    .where(_of_trials(_PARAMS)).order_by(_PARAMS.c.param_id)
)  # fmt: skip
_TRIAL_STEPS = sqlalchemy.select(
    _STEPS.c.trial_id, _STEPS.c.step, _STEPS.c.intermediate_value, _STEPS.c.intermediate_value_type
).where(_of_trials(_STEPS))
_TRIAL_USER = sqlalchemy.select(_USER.c.trial_id, _USER.c.key, _USER.c.value_json).where(_of_trials(_USER))
_TRIAL_SYSTEM = sqlalchemy.select(_SYSTEM.c.trial_id, _SYSTEM.c.key, _SYSTEM.c.value_json).where(_of_trials(_SYSTEM))


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    """The bound parameters' names, in their `?` order."""
    decoders: tuple[Callable[[Any], Any] | None, ...]
    """Each column's SQLAlchemy result processor for SQLite (None: taken as sqlite3 returns it)."""


@cache
def _compiled(statement: Any) -> _Compiled:
    compiled = statement.compile(dialect=_DIALECT)
    decoders = tuple(c.type.dialect_impl(_DIALECT).result_processor(_DIALECT, None) for c in statement.selected_columns)
    return _Compiled(str(compiled), tuple(compiled.positiontup or ()), decoders)


def _rows(conn: sqlite3.Connection, statement: Any, **params: Any) -> list[tuple[Any, ...]]:
    """The rows of an SQLAlchemy Core select on optuna's tables, run through sqlite3 and decoded
    as SQLAlchemy would decode them."""
    query = _compiled(statement)
    rows = conn.execute(query.sql, [params[name] for name in query.names]).fetchall()
    if not any(query.decoders):
        return rows
    return [tuple(v if d is None or v is None else d(v) for d, v in zip(query.decoders, row)) for row in rows]


def _local(utc: datetime | None) -> datetime | None:
    """A stored naive-UTC trial datetime as `RDBStorage` hands it out (naive local time, see
    `models.TrialModel.datetime_start`)."""
    return None if utc is None else utc.replace(tzinfo=UTC).astimezone().replace(tzinfo=None)


@dataclass(frozen=True)
class LedgerSnapshot:
    """A campaign's ledger at one read: what `Ledger.load(name)` would answer at that moment."""

    campaign: Campaign
    """The config it last ran with (`Ledger.load(name).campaign`)."""
    facts: CampaignFacts
    trials: list[TrialRecord]
    """Every trial, as `Ledger.load(name).trials()` gives them."""
    paths: CampaignPaths
    storage_url: str
    """`sqlite:///...` of the ledger, for optuna-dashboard."""


class LedgerReader:
    """Reads one campaign's ledger with sqlite3, keeping its finished trials (see the module doc).
    Safe to share between threads (one read at a time)."""

    def __init__(self, name: str, home: str | os.PathLike[str] | None = None) -> None:
        self.paths = CampaignPaths.of(name, home)
        self.home = home
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode = 0
        self._started: str | None = None
        self._finished: dict[int, TrialRecord] = {}
        """trial id -> the record of a trial that ended (it never changes)."""
        self._config: tuple[str, Campaign] | None = None
        self._distributions: dict[str, BaseDistribution] = {}

    def read(self) -> LedgerSnapshot:
        """The ledger now; LedgerError when there is none, or it is lost or corrupt."""
        path = self.paths.ledger_db
        with self._lock, sqlite_errors(path):
            try:
                inode = path.stat().st_ino
            except FileNotFoundError:
                self._reset()  # the folder was moved away: let go of the old file
                raise no_campaign(self.paths.name, self.home) from None
            if self._conn is None or inode != self._inode:
                self._reset()
                with schema_lock(self.paths.root, exclusive=False):  # `Ledger.open` may be creating it now
                    check_not_lost(self.paths, self.paths.name)
                    self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30,
                                                 isolation_level=None, check_same_thread=False)  # fmt: skip
                    self._inode = inode
            conn = self._conn
            conn.execute("BEGIN")
            try:
                return self._read(conn)
            finally:
                conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._inode, self._started, self._finished, self._config = None, 0, None, {}, None

    def _read(self, conn: sqlite3.Connection) -> LedgerSnapshot:
        name = self.paths.name
        found = _rows(conn, _STUDY, name=name)
        if not found:
            raise study_missing(name, self.paths.ledger_db)
        study_id = found[0][0]
        raw = dict(_rows(conn, _ATTRS, study=study_id))
        attrs = {key: json.loads(value) for key, value in raw.items()}
        if attrs.get("started_at") != self._started:  # a study made afresh under this name
            self._started, self._finished = attrs.get("started_at"), {}
        if CONFIG_ATTR not in raw:  # a study without its config: its first run was cut off while making it
            raise study_missing(name, self.paths.ledger_db)
        campaign = self._campaign(raw[CONFIG_ATTR])
        rows = _rows(conn, _TRIAL_ROWS, study=study_id)
        fresh = {
            t._trial_id: trial_record(t) for t in self._frozen(conn, [r for r in rows if r[0] not in self._finished])
        }
        self._finished.update({tid: record for tid, record in fresh.items() if record.state.final})
        space = campaign.search_space
        records = [self._finished.get(tid) or fresh[tid] for tid, *_ in rows]
        return LedgerSnapshot(
            campaign=campaign,
            facts=facts_from_attrs(attrs),
            trials=[r for r in records if not half_drawn(r, space)],
            paths=self.paths,
            storage_url=storage_url(self.paths.ledger_db),
        )

    def _campaign(self, config_json: str) -> Campaign:
        if self._config is None or self._config[0] != config_json:
            campaign = Campaign.model_validate(json.loads(config_json), context={"check_paths": False})
            self._config = (config_json, campaign)
        return self._config[1]

    def _distribution(self, text: str) -> BaseDistribution:
        if text not in self._distributions:
            self._distributions[text] = json_to_distribution(text)
        return self._distributions[text]

    def _frozen(self, conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> list[FrozenTrial]:
        """The trials of `rows` (trials table rows) as `RDBStorage._build_frozen_trial_from_trial_model` builds them."""
        if not rows:
            return []
        ids = json.dumps([row[0] for row in rows])
        values: dict[int, dict[int, float]] = {}
        for tid, objective, value, kind in _rows(conn, _TRIAL_VALUES, ids=ids):
            values.setdefault(tid, {})[objective] = models.TrialValueModel.stored_repr_to_value(value, kind)
        params: dict[int, dict[str, Any]] = {}
        distributions: dict[int, dict[str, BaseDistribution]] = {}
        for tid, param, internal, text in _rows(conn, _TRIAL_PARAMS, ids=ids):
            distribution = self._distribution(text)
            params.setdefault(tid, {})[param] = distribution.to_external_repr(internal)
            distributions.setdefault(tid, {})[param] = distribution
        steps: dict[int, dict[int, float]] = {}
        for tid, step, value, kind in _rows(conn, _TRIAL_STEPS, ids=ids):
            steps.setdefault(tid, {})[step] = models.TrialIntermediateValueModel.stored_repr_to_intermediate_value(
                value, kind
            )
        user, system = _attrs(_rows(conn, _TRIAL_USER, ids=ids)), _attrs(_rows(conn, _TRIAL_SYSTEM, ids=ids))
        return [
            FrozenTrial(
                number=number, state=state, value=None,
                values=[values[tid][o] for o in sorted(values[tid])] if tid in values else None,
                datetime_start=_local(started), datetime_complete=_local(completed),
                params=params.get(tid, {}), distributions=distributions.get(tid, {}),
                user_attrs=user.get(tid, {}), system_attrs=system.get(tid, {}),
                intermediate_values=steps.get(tid, {}), trial_id=tid,
            )
            for tid, number, state, started, completed in rows
        ]  # fmt: skip


def _attrs(rows: Iterable[tuple[Any, ...]]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for tid, key, value in rows:
        out.setdefault(tid, {})[key] = json.loads(value)
    return out
