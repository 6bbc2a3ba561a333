"""`MirroredStorage`: the campaign writer's Optuna storage, an RDB study with its trials kept in memory.

Optuna's own cache (`_CachedStorage`) keeps only finished trials and reads every unfinished one
back from SQLite on each `get_all_trials`: a sampler asks that ~3 times per `ask`, and with 4
trials running that was most of the runner's time between a job's end and the next submit.

Rules (the ledger's `cache` rule, one level down):

- **Single writer.** Only the runner holding the campaign's lock makes one (`Ledger.open(cache=True)`);
  every write of that process (ledger, policy, pruner: they share this object) goes through it,
  so the mirror can trust what it holds. Readers in other processes use a plain `RDBStorage`.
- **Write through.** Every write is committed to the RDB first and applied to the mirror only
  once it committed: a crash loses nothing the store had not already got, and the store stays
  the record (a restarted runner reads it afresh).
- **What is mirrored.** Every trial of the study, read once on first use. Params, attributes
  intermediate values and `write_trial`'s verdicts are applied in memory; a new trial comes back
  from its insert (as in optuna's `_CachedStorage`), and a `set_trial_state_values` (an ask) is read
  back from the RDB once (timestamps). Study-level calls go
  straight to the RDB.
- **Batches.** Drawn parameters and a sampler's system attributes are committed with the next
  write (`set_trial_param`); a new trial is one INSERT.
  `write_trial` commits a trial's attributes, and optionally its end state and
  value, in one transaction of a few SQLAlchemy Core statements (the RDB API has one commit, and
  several ORM queries, per attribute).
- Trials handed out are never changed afterwards (a write replaces the trial with a copy).
"""

from __future__ import annotations

import copy
import functools
import json
from datetime import UTC, datetime
from collections.abc import Container, Mapping, Sequence
from typing import Any

import sqlalchemy
from optuna.distributions import BaseDistribution, check_distribution_compatibility, distribution_to_json
from optuna.storages import BaseStorage, RDBStorage
from optuna.storages._rdb import models
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from optuna.study import StudyDirection
from optuna.study._frozen import FrozenStudy
from optuna.trial import FrozenTrial, TrialState


def write_trial(
    storage: BaseStorage,
    trial_id: int,
    attrs: Mapping[str, Any],
    state: TrialState | None = None,
    values: Sequence[float] | None = None,
) -> None:
    """Set user attributes of a trial, then (with `state`) end it, in one transaction where the
    storage allows (an RDB or a mirror of one); other storages get one call per write."""
    if isinstance(storage, MirroredStorage):
        storage.write_trial(trial_id, attrs, state, values)
    elif isinstance(storage, RDBStorage):
        _rdb_write(storage, trial_id, attrs, state, values)
    else:
        for key, value in attrs.items():
            storage.set_trial_user_attr(trial_id, key, value)
        if state is not None:
            storage.set_trial_state_values(trial_id, state, values)


def flush(storage: BaseStorage) -> None:
    """Commit what a `MirroredStorage` holds back (parameters drawn since its last write)."""
    if isinstance(storage, MirroredStorage):
        storage.flush()


class _Statements:
    """The few SQLAlchemy Core statements `_rdb_write` and `_rdb_new_trial` execute, built once:
    building an upsert (its `excluded` alias and column proxies) cost more than running it."""

    def __init__(self) -> None:
        trials, values = models.TrialModel.__table__, models.TrialValueModel.__table__
        self.states = (sqlalchemy.select(trials.c.trial_id, trials.c.state)
                       .where(trials.c.trial_id.in_(sqlalchemy.bindparam("ids", expanding=True))))  # fmt: skip
        self.insert_params = sqlalchemy.insert(models.TrialParamModel.__table__)
        self.upsert_attrs = {model: self._upsert(model.__table__, ("trial_id", "key"), ("value_json",))
                             for model in (models.TrialSystemAttributeModel, models.TrialUserAttributeModel)}  # fmt: skip
        self.upsert_values = self._upsert(values, ("trial_id", "objective"), ("value", "value_type"))
        self.set_state = (sqlalchemy.update(trials).where(trials.c.trial_id == sqlalchemy.bindparam("id"))
                          .values(state=sqlalchemy.bindparam("state")))  # fmt: skip
        self.end_state = self.set_state.values(datetime_complete=sqlalchemy.bindparam("ended"))
        self.insert_trial = sqlalchemy.insert(trials)

    @staticmethod
    def _upsert(table: sqlalchemy.Table, keys: tuple[str, ...], columns: tuple[str, ...]) -> Any:
        upsert = sqlite_insert(table)
        return upsert.on_conflict_do_update(index_elements=[table.c[k] for k in keys],
                                            set_={c: upsert.excluded[c] for c in columns})  # fmt: skip


@functools.cache
def _statements() -> _Statements:
    return _Statements()


def _rdb_write(
    rdb: RDBStorage,
    trial_id: int,
    attrs: Mapping[str, Any],
    state: TrialState | None,
    values: Sequence[float] | None,
    params: Sequence[tuple[int, str, float, BaseDistribution]] = (),
    system_attrs: Sequence[tuple[int, str, Any]] = (),
) -> datetime | None:
    """`set_trial_param` for each of `params`, `set_trial_system_attr` for each of `system_attrs`,
    `set_trial_user_attr` for each attribute and `set_trial_state_values`, in one commit. Written as SQLAlchemy Core statements on optuna
    5.0's tables (its RDBStorage has no batch call, and its ORM path costs a few queries per
    attribute): the same rows, a handful of statements. Returns the `datetime_complete` (naive
    local time, as `get_trial` reads it back) it stored when it ended the trial."""
    sql = _statements()
    with rdb.engine.begin() as conn:
        ids = {trial_id, *(p[0] for p in params), *(a[0] for a in system_attrs)}
        found: dict[int, TrialState] = dict(conn.execute(sql.states, {"ids": list(ids)}).all())
        for one in ids:
            if one not in found:
                raise KeyError(f"No trial with trial_id {one} exists.")
            rdb.check_trial_is_updatable(one, found[one])
        if params:
            conn.execute(sql.insert_params, [
                {"trial_id": t, "param_name": name, "param_value": internal,
                 "distribution_json": distribution_to_json(distribution)}
                for t, name, internal, distribution in params
            ])  # fmt: skip
        user_attrs = [(trial_id, key, value) for key, value in attrs.items()]
        for model, entries in ((models.TrialSystemAttributeModel, system_attrs),
                               (models.TrialUserAttributeModel, user_attrs)):  # fmt: skip
            if entries:
                conn.execute(sql.upsert_attrs[model],
                             [{"trial_id": t, "key": k, "value_json": json.dumps(v)} for t, k, v in entries])  # fmt: skip
        if state is None:
            return None
        if values:
            rows: list[dict[str, Any]] = []
            for objective, value in enumerate(values):
                stored, kind = models.TrialValueModel.value_to_stored_repr(value)
                rows.append({"trial_id": trial_id, "objective": objective, "value": stored, "value_type": kind})
            conn.execute(sql.upsert_values, rows)
        ended = datetime.now(UTC).replace(tzinfo=None) if state.is_finished() else None
        if ended is None:
            conn.execute(sql.set_state, {"id": trial_id, "state": state})
        else:
            conn.execute(sql.end_state, {"id": trial_id, "state": state, "ended": ended})
    return ended.replace(tzinfo=UTC).astimezone().replace(tzinfo=None) if ended else None


def _rdb_new_trial(rdb: RDBStorage, study_id: int, number: int) -> FrozenTrial:
    """A new RUNNING trial numbered `number`, as optuna's `create_new_trial` without a template
    makes it, in one INSERT (the caller, the single writer, knows the number)."""
    started = datetime.now()
    row = {"number": number, "study_id": study_id, "state": TrialState.RUNNING,
           "datetime_start": started.astimezone(UTC).replace(tzinfo=None)}  # fmt: skip
    with rdb.engine.begin() as conn:
        key = conn.execute(_statements().insert_trial, row).inserted_primary_key
    assert key is not None
    trial_id = int(key[0])
    return FrozenTrial(
        number=number, state=TrialState.RUNNING, value=None, values=None, datetime_start=started,
        datetime_complete=None, params={}, distributions={}, user_attrs={}, system_attrs={},
        intermediate_values={}, trial_id=trial_id,
    )  # fmt: skip


class MirroredStorage(BaseStorage):
    """An `RDBStorage` whose trials this (single-writer) process also keeps in memory."""

    def __init__(self, backend: RDBStorage) -> None:
        self.backend = backend
        self._trials: dict[int, dict[int, FrozenTrial]] = {}
        """study id -> trial id -> the trial as last committed."""
        self._study_of: dict[int, int] = {}
        self._params: list[tuple[int, str, float, BaseDistribution]] = []
        """Parameters drawn but not yet committed: they go with the next write (see `set_trial_param`)."""
        self._system: list[tuple[int, str, Any]] = []
        """System attributes (a sampler's notes on a trial it samples) not yet committed, likewise."""

    # --- trials: mirrored ------------------------------------------------------------

    def _study(self, study_id: int) -> dict[int, FrozenTrial]:
        if study_id not in self._trials:
            trials = self.backend.get_all_trials(study_id, deepcopy=False)
            self._trials[study_id] = {t._trial_id: t for t in trials}
            self._study_of.update({t._trial_id: study_id for t in trials})
        return self._trials[study_id]

    def _cached(self, trial_id: int) -> FrozenTrial:
        if trial_id not in self._study_of:  # a study not read yet (KeyError from the RDB when there is none)
            return self.backend.get_trial(trial_id)
        return self._trials[self._study_of[trial_id]][trial_id]

    def _reread(self, trial_id: int) -> None:
        trial = self.backend.get_trial(trial_id)
        study_id = self._study_of[trial_id]
        self._trials[study_id][trial_id] = trial

    def _replace(self, trial_id: int, **fields: Any) -> None:
        """Apply a committed write to the mirror (copy on write)."""
        study_id = self._study_of.get(trial_id)
        if study_id is None:
            return
        trial = copy.copy(self._trials[study_id][trial_id])
        for name, value in fields.items():
            setattr(trial, name, value)
        self._trials[study_id][trial_id] = trial

    def create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> int:
        trials = self._study(study_id)
        self.flush()
        if template_trial is None:
            trial = _rdb_new_trial(self.backend, study_id, len(trials))  # numbers count the study's trials
        else:
            trial = self.backend._create_new_trial(study_id, template_trial)  # as optuna's _CachedStorage
        trials[trial._trial_id] = trial
        self._study_of[trial._trial_id] = study_id
        return trial._trial_id

    def set_trial_param(
        self, trial_id: int, param_name: str, param_value_internal: float, distribution: BaseDistribution
    ) -> None:
        """Mirrored at once, committed with the trial's (or any) next write: a sampler draws a trial's
        parameters one by one, and each was a commit. A trial cut off by a crash before that write
        is one proposed without some parameter, which `Ledger.open` cancels (it has no job: its
        launch writes first)."""
        if trial_id not in self._study_of:
            self.backend.set_trial_param(trial_id, param_name, param_value_internal, distribution)
            return
        trial = self._cached(trial_id)
        self.check_trial_is_updatable(trial_id, trial.state)
        for other in self._trials[self._study_of[trial_id]].values():
            if param_name in other.distributions:  # as the RDB checks at its commit
                check_distribution_compatibility(other.distributions[param_name], distribution)
                break
        self._params.append((trial_id, param_name, param_value_internal, distribution))
        params = {**trial.params, param_name: distribution.to_external_repr(param_value_internal)}
        self._replace(trial_id, params=params, distributions={**trial.distributions, param_name: distribution})

    def flush(self) -> None:
        """Commit the parameters drawn since the last write."""
        if self._params or self._system:
            first = (self._params[0] if self._params else self._system[0])[0]
            _rdb_write(self.backend, first, {}, None, None, self._params, self._system)
            self._params, self._system = [], []

    def set_trial_state_values(self, trial_id: int, state: TrialState, values: Sequence[float] | None = None) -> bool:
        self.flush()
        changed = self.backend.set_trial_state_values(trial_id, state, values)
        if trial_id in self._study_of:
            self._reread(trial_id)
        return changed

    def set_trial_intermediate_value(self, trial_id: int, step: int, intermediate_value: float) -> None:
        self.flush()
        self.backend.set_trial_intermediate_value(trial_id, step, intermediate_value)
        if trial_id in self._study_of:
            values = {**self._cached(trial_id).intermediate_values, step: intermediate_value}
            self._replace(trial_id, intermediate_values=values)

    def set_trial_user_attr(self, trial_id: int, key: str, value: Any) -> None:
        self.write_trial(trial_id, {key: value})

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        """Mirrored at once, committed with the next write, as `set_trial_param` (TPE's constant
        liar writes one while it samples a trial)."""
        if trial_id not in self._study_of:
            self.backend.set_trial_system_attr(trial_id, key, value)
            return
        trial = self._cached(trial_id)
        self.check_trial_is_updatable(trial_id, trial.state)
        self._system.append((trial_id, key, value))
        self._replace(trial_id, system_attrs={**trial.system_attrs, key: value})

    def write_trial(
        self,
        trial_id: int,
        attrs: Mapping[str, Any],
        state: TrialState | None = None,
        values: Sequence[float] | None = None,
    ) -> None:
        """See `write_trial`: one commit, then the mirror."""
        ended = _rdb_write(self.backend, trial_id, attrs, state, values, self._params, self._system)
        self._params, self._system = [], []
        if trial_id not in self._study_of:
            return
        trial = self._cached(trial_id)
        fields: dict[str, Any] = {"user_attrs": {**trial.user_attrs, **attrs}}
        if state is not None:  # what the RDB now holds, as `get_trial` would read it back
            fields.update(state=state, datetime_complete=ended)
            if values is not None:
                fields["values"] = [float(v) for v in values]
        self._replace(trial_id, **fields)

    def get_trial(self, trial_id: int) -> FrozenTrial:
        return self._cached(trial_id)

    def get_trial_id_from_study_id_trial_number(self, study_id: int, trial_number: int) -> int:
        for trial_id, trial in self._study(study_id).items():
            if trial.number == trial_number:
                return trial_id
        return self.backend.get_trial_id_from_study_id_trial_number(study_id, trial_number)

    def get_all_trials(
        self, study_id: int, deepcopy: bool = True, states: Container[TrialState] | None = None
    ) -> list[FrozenTrial]:
        trials = [t for t in self._study(study_id).values() if states is None or t.state in states]
        trials.sort(key=lambda t: t.number)
        return copy.deepcopy(trials) if deepcopy else trials

    # --- studies: straight to the RDB ------------------------------------------------

    def create_new_study(self, directions: Sequence[StudyDirection], study_name: str | None = None) -> int:
        return self.backend.create_new_study(directions, study_name)

    def delete_study(self, study_id: int) -> None:
        self.flush()
        self.backend.delete_study(study_id)
        for trial_id in self._trials.pop(study_id, {}):
            self._study_of.pop(trial_id, None)

    def set_study_user_attr(self, study_id: int, key: str, value: Any) -> None:
        self.flush()
        self.backend.set_study_user_attr(study_id, key, value)

    def set_study_system_attr(self, study_id: int, key: str, value: Any) -> None:
        self.flush()
        self.backend.set_study_system_attr(study_id, key, value)

    def get_study_id_from_name(self, study_name: str) -> int:
        return self.backend.get_study_id_from_name(study_name)

    def get_study_name_from_id(self, study_id: int) -> str:
        return self.backend.get_study_name_from_id(study_id)

    def get_study_directions(self, study_id: int) -> list[StudyDirection]:
        return self.backend.get_study_directions(study_id)

    def get_study_user_attrs(self, study_id: int) -> dict[str, Any]:
        return self.backend.get_study_user_attrs(study_id)

    def get_study_system_attrs(self, study_id: int) -> dict[str, Any]:
        return self.backend.get_study_system_attrs(study_id)

    def get_all_studies(self) -> list[FrozenStudy]:
        return self.backend.get_all_studies()
