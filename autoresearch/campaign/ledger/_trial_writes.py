"""The writer's trial writes as SQL on a sqlite3 connection: `rdb_write` (a trial's attributes,
end state and values, with the parameters and system attributes held back) and `rdb_new_trial`.

Optuna's RDBStorage has no batch call, and its ORM path costs a few queries and a commit per
attribute. These are a handful of SQLAlchemy Core statements on Optuna's tables (`_Statements`, from
the models `_optuna_internals` hands out, used only with the releases it names as tested),
compiled once with SQLAlchemy's SQLite dialect into the text SQLAlchemy would send
(`_Sql`), and executed on a sqlite3 connection of the storage without SQLAlchemy, whose
per-statement and per-transaction work was most of a write's cost (a one-attribute write
0.4-0.5 -> ~0.1 ms, a verdict 0.75-1.0 -> ~0.2 ms; docs/benchmarks.md). Bound values go through
the bind processors of the columns' own SQLAlchemy types (enums by name, datetimes in its SQLite
string format), so the rows are those SQLAlchemy would write;
`tests/autoresearch/campaign/test_mirror.py` checks text and values against SQLAlchemy's own
execution of each statement.

Each call is one transaction, `BEGIN IMMEDIATE` to `COMMIT` (rolled back on any error): it takes
the write lock before it reads the trials' states, so the check and the writes see one snapshot.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy
from optuna.distributions import BaseDistribution, distribution_to_json
from optuna.storages import BaseStorage, RDBStorage
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from autoresearch.campaign.ledger._optuna_internals import models as optuna_models

_DIALECT = sqlite.dialect()
"""SQLAlchemy's SQLite dialect (pysqlite, qmark parameters), which the statements are compiled with."""


@dataclass(frozen=True)
class _Sql:
    """A statement compiled for SQLite, with what it binds."""

    statement: ClauseElement
    """The SQLAlchemy statement it was compiled from."""
    keys: tuple[str, ...]
    """The parameter names it was compiled for (SQLAlchemy compiles an INSERT for the keys given)."""
    text: str
    """The SQL SQLAlchemy sends for it."""
    slots: tuple[tuple[str, int | None, Callable[[Any], Any] | None], ...]
    """Per `?` in `text`: the parameter, the index into it where an expanding (IN) one was expanded,
    and the bind processor of its SQLAlchemy type (None where the type has none)."""

    @classmethod
    def of(cls, statement: ClauseElement, keys: tuple[str, ...], expand: int = 0) -> _Sql:
        """`statement` compiled for parameters `keys`, an expanding one (IN) with `expand` values."""
        compiled = statement.compile(dialect=_DIALECT, column_keys=sorted(keys))  # as `execute` compiles it
        assert isinstance(compiled, SQLCompiler)
        sample = {k: [None] * expand if compiled.binds[k].expanding else None for k in keys}
        expanded = compiled.construct_expanded_state(sample)
        origin = {name: (key, i) for key, names in expanded.parameter_expansion.items() for i, name in enumerate(names)}
        slots = []
        for name in expanded.positiontup or ():
            key, index = origin.get(name, (name, None))
            processor = compiled.binds[key].type.dialect_impl(_DIALECT).bind_processor(_DIALECT)
            slots.append((key, index, processor))
        return cls(statement, keys, expanded.statement, tuple(slots))

    def args(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The values bound for `params`, as SQLAlchemy converts them."""
        bound = []
        for key, index, processor in self.slots:
            value = params[key] if index is None else params[key][index]
            bound.append(value if processor is None else processor(value))
        return tuple(bound)


class _Statements:
    """The statements `rdb_write` and `rdb_new_trial` execute, built and compiled once."""

    def __init__(self) -> None:
        models = optuna_models()
        trials, values = models.TrialModel.__table__, models.TrialValueModel.__table__
        self._select_states = (sqlalchemy.select(trials.c.trial_id, trials.c.state)
                               .where(trials.c.trial_id.in_(sqlalchemy.bindparam("ids", expanding=True))))  # fmt: skip
        self._states: dict[int, _Sql] = {}
        self.insert_params = _Sql.of(sqlalchemy.insert(models.TrialParamModel.__table__),
                                     ("trial_id", "param_name", "param_value", "distribution_json"))  # fmt: skip
        self.upsert_system_attrs = self._upsert(
            models.TrialSystemAttributeModel.__table__, ("trial_id", "key"), ("value_json",)
        )
        self.upsert_user_attrs = self._upsert(
            models.TrialUserAttributeModel.__table__, ("trial_id", "key"), ("value_json",)
        )
        self.upsert_values = self._upsert(values, ("trial_id", "objective"), ("value", "value_type"))
        self.upsert_steps = self._upsert(models.TrialIntermediateValueModel.__table__, ("trial_id", "step"),
                                         ("intermediate_value", "intermediate_value_type"))  # fmt: skip
        self.upsert_study_attrs = self._upsert(
            models.StudyUserAttributeModel.__table__, ("study_id", "key"), ("value_json",)
        )
        set_state = (sqlalchemy.update(trials).where(trials.c.trial_id == sqlalchemy.bindparam("id"))
                     .values(state=sqlalchemy.bindparam("state")))  # fmt: skip
        self.set_state = _Sql.of(set_state, ("id", "state"))
        self.end_state = _Sql.of(
            set_state.values(datetime_complete=sqlalchemy.bindparam("ended")), ("id", "state", "ended")
        )
        self.insert_trial = _Sql.of(sqlalchemy.insert(trials), ("number", "study_id", "state", "datetime_start"))

    def states(self, count: int) -> _Sql:
        """The states of `count` trials (`ids`): SQLAlchemy expands the IN list at execution."""
        if count not in self._states:
            self._states[count] = _Sql.of(self._select_states, ("ids",), expand=count)
        return self._states[count]

    @staticmethod
    def _upsert(table: sqlalchemy.Table, keys: tuple[str, ...], columns: tuple[str, ...]) -> _Sql:
        upsert = sqlite_insert(table)
        upsert = upsert.on_conflict_do_update(index_elements=[table.c[k] for k in keys],
                                              set_={c: upsert.excluded[c] for c in columns})  # fmt: skip
        return _Sql.of(upsert, (*keys, *columns))


@functools.cache
def statements() -> _Statements:
    return _Statements()


def connection_of(rdb: RDBStorage) -> sqlite3.Connection:
    """A sqlite3 connection to `rdb`'s file made by its engine (so with its pragmas: WAL,
    synchronous=NORMAL, busy timeout), taken out of its pool for good: the caller closes it."""
    proxied = rdb.engine.raw_connection()
    proxied.detach()
    return _sqlite(proxied.dbapi_connection)


@contextmanager
def pooled(rdb: RDBStorage) -> Iterator[sqlite3.Connection]:
    """One of `rdb`'s pooled sqlite3 connections, for one write."""
    proxied = rdb.engine.raw_connection()
    try:
        yield _sqlite(proxied.dbapi_connection)
    finally:
        proxied.close()


def _sqlite(connection: Any) -> sqlite3.Connection:
    if not isinstance(connection, sqlite3.Connection):
        raise TypeError(f"the ledger's trial writes need an SQLite storage, not {type(connection).__name__}")
    return connection


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Cursor]:
    cursor = connection.cursor()
    cursor.execute("BEGIN IMMEDIATE")
    try:
        yield cursor
        cursor.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite may have rolled back already (a full disk)
            cursor.execute("ROLLBACK")
        raise


def rdb_write(
    connection: sqlite3.Connection,
    storage: BaseStorage,
    trial_id: int,
    attrs: Mapping[str, Any],
    state: TrialState | None,
    values: Sequence[float] | None,
    params: Sequence[tuple[int, str, float, BaseDistribution]] = (),
    system_attrs: Sequence[tuple[int, str, Any]] = (),
    steps: Sequence[tuple[int, float]] = (),
) -> datetime | None:
    """`set_trial_param` for each of `params`, `set_trial_system_attr` for each of `system_attrs`,
    `set_trial_user_attr` for each attribute, `set_trial_intermediate_value` for each (step, value)
    of `steps` and `set_trial_state_values`, in one transaction on
    `connection` (`storage` checks that the trials are updatable). Returns the `datetime_complete`
    (naive local time, as `get_trial` reads it back) it stored when it ended the trial."""
    sql = statements()
    with _transaction(connection) as cursor:
        ids = list({trial_id, *(p[0] for p in params), *(a[0] for a in system_attrs)})
        states = sql.states(len(ids))
        found = {row[0]: TrialState[row[1]] for row in cursor.execute(states.text, states.args({"ids": ids}))}
        for one in ids:
            if one not in found:
                raise KeyError(f"No trial with trial_id {one} exists.")
            storage.check_trial_is_updatable(one, found[one])
        if params:
            cursor.executemany(sql.insert_params.text, [sql.insert_params.args(
                {"trial_id": t, "param_name": name, "param_value": internal,
                 "distribution_json": distribution_to_json(distribution)}
            ) for t, name, internal, distribution in params])  # fmt: skip
        user_attrs = [(trial_id, key, value) for key, value in attrs.items()]
        for upsert, entries in ((sql.upsert_system_attrs, system_attrs), (sql.upsert_user_attrs, user_attrs)):
            if entries:
                cursor.executemany(upsert.text, [upsert.args({"trial_id": t, "key": k, "value_json": json.dumps(v)})
                                                 for t, k, v in entries])  # fmt: skip
        if steps:
            rows = []
            stored_repr = optuna_models().TrialIntermediateValueModel.intermediate_value_to_stored_repr
            for step, value in steps:
                reading, reading_type = stored_repr(value)
                rows.append(sql.upsert_steps.args({"trial_id": trial_id, "step": step, "intermediate_value": reading,
                                                   "intermediate_value_type": reading_type}))  # fmt: skip
            cursor.executemany(sql.upsert_steps.text, rows)
        if state is None:
            return None
        if values:
            rows = []
            for objective, value in enumerate(values):
                stored, kind = optuna_models().TrialValueModel.value_to_stored_repr(value)
                rows.append(sql.upsert_values.args({"trial_id": trial_id, "objective": objective,
                                                    "value": stored, "value_type": kind}))  # fmt: skip
            cursor.executemany(sql.upsert_values.text, rows)
        ended = datetime.now(UTC).replace(tzinfo=None) if state.is_finished() else None
        if ended is None:
            cursor.execute(sql.set_state.text, sql.set_state.args({"id": trial_id, "state": state}))
        else:
            cursor.execute(sql.end_state.text, sql.end_state.args({"id": trial_id, "state": state, "ended": ended}))
    return ended.replace(tzinfo=UTC).astimezone().replace(tzinfo=None) if ended else None


def rdb_study_attrs(connection: sqlite3.Connection, study_id: int, attrs: Mapping[str, Any]) -> None:
    """`set_study_user_attr` for each of `attrs`, in one transaction on `connection` (a reader sees
    all of them or none: a campaign's state never without its reason)."""
    sql = statements()
    with _transaction(connection) as cursor:
        cursor.executemany(sql.upsert_study_attrs.text, [
            sql.upsert_study_attrs.args({"study_id": study_id, "key": key, "value_json": json.dumps(value)})
            for key, value in attrs.items()
        ])  # fmt: skip


def rdb_new_trial(connection: sqlite3.Connection, study_id: int, number: int) -> FrozenTrial:
    """A new RUNNING trial numbered `number`, as optuna's `create_new_trial` without a template
    makes it, in one INSERT (the caller, the single writer, knows the number)."""
    started = datetime.now()
    insert = statements().insert_trial
    row = {"number": number, "study_id": study_id, "state": TrialState.RUNNING,
           "datetime_start": started.astimezone(UTC).replace(tzinfo=None)}  # fmt: skip
    with _transaction(connection) as cursor:
        trial_id = cursor.execute(insert.text, insert.args(row)).lastrowid
    assert trial_id is not None
    return FrozenTrial(
        number=number, state=TrialState.RUNNING, value=None, values=None, datetime_start=started,
        datetime_complete=None, params={}, distributions={}, user_attrs={}, system_attrs={},
        intermediate_values={}, trial_id=trial_id,
    )  # fmt: skip
