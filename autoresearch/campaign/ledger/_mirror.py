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
  `write_trial` commits a trial's attributes and intermediate values, and optionally its end state
  and value, in one transaction of a few statements (the RDB API has one commit, and several ORM
  queries, per attribute): SQLAlchemy Core statements compiled once to SQLite's SQL and run on a
  sqlite3 connection of the mirror's own (`_trial_writes`). Every other write goes through the
  RDB, on its pooled connections.
- Trials handed out are never changed afterwards (a write replaces the trial with a copy).
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from optuna.distributions import BaseDistribution, check_distribution_compatibility
from optuna.storages import BaseStorage, RDBStorage
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from autoresearch.campaign.ledger._optuna_internals import internals_usable
from autoresearch.campaign.ledger._trial_writes import (
    connection_of, pooled, rdb_new_trial, rdb_study_attrs, rdb_write,
)


if TYPE_CHECKING:
    from autoresearch.campaign.ledger._optuna_internals import FrozenStudy

def write_trial(
    storage: BaseStorage,
    trial_id: int,
    attrs: Mapping[str, Any],
    state: TrialState | None = None,
    values: Sequence[float] | None = None,
    steps: Sequence[tuple[int, float]] = (),
) -> None:
    """Set user attributes and intermediate values (`steps`: (step, value)) of a trial, then (with
    `state`) end it, in one transaction where the storage allows (an RDB or a mirror of one, with a
    tested Optuna: `_optuna_internals`); other storages get one call per write."""
    if isinstance(storage, MirroredStorage):
        storage.write_trial(trial_id, attrs, state, values, steps)
    elif isinstance(storage, RDBStorage) and internals_usable():
        with pooled(storage) as connection:
            rdb_write(connection, storage, trial_id, attrs, state, values, steps=steps)
    else:
        for key, value in attrs.items():
            storage.set_trial_user_attr(trial_id, key, value)
        for step, value in steps:
            storage.set_trial_intermediate_value(trial_id, step, value)
        if state is not None:
            storage.set_trial_state_values(trial_id, state, values)


def write_study_attrs(storage: BaseStorage, study_id: int, attrs: Mapping[str, Any]) -> None:
    """Set user attributes of a study in one transaction where the storage allows (an RDB or a
    mirror of one); other storages get one call per attribute."""
    if isinstance(storage, MirroredStorage):
        storage.write_study_attrs(study_id, attrs)
    elif isinstance(storage, RDBStorage) and internals_usable():
        with pooled(storage) as connection:
            rdb_study_attrs(connection, study_id, attrs)
    else:
        for key, value in attrs.items():
            storage.set_study_user_attr(study_id, key, value)


def flush(storage: BaseStorage) -> None:
    """Commit what a `MirroredStorage` holds back (parameters drawn since its last write)."""
    if isinstance(storage, MirroredStorage):
        storage.flush()


class MirroredStorage(BaseStorage):
    """An `RDBStorage` whose trials this (single-writer) process also keeps in memory."""

    def __init__(self, backend: RDBStorage) -> None:
        self.backend = backend
        self._connection = connection_of(backend)
        """The backend's connection this object's trial writes and new trials take (taking one from the
        pool per write cost 60-80 us, a third of the write); closed with this object."""
        weakref.finalize(self, self._connection.close)
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
            trial = rdb_new_trial(self._connection, study_id, len(trials))  # numbers count the study's trials
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
            rdb_write(self._connection, self, first, {}, None, None, self._params, self._system)
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
        steps: Sequence[tuple[int, float]] = (),
    ) -> None:
        """See `write_trial`: one commit, then the mirror."""
        ended = rdb_write(self._connection, self, trial_id, attrs, state, values, self._params, self._system, steps)
        self._params, self._system = [], []
        if trial_id not in self._study_of:
            return
        trial = self._cached(trial_id)
        fields: dict[str, Any] = {"user_attrs": {**trial.user_attrs, **attrs}}
        if steps:
            fields["intermediate_values"] = {**trial.intermediate_values, **dict(steps)}
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

    def write_study_attrs(self, study_id: int, attrs: Mapping[str, Any]) -> None:
        """See `write_study_attrs`: one commit (after the parameters held back)."""
        self.flush()
        rdb_study_attrs(self._connection, study_id, attrs)

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
