"""Optuna's internals, in one place: what the ledger knows of Optuna beyond its public API, and the
check, at start, that the installed Optuna is one this was tested with.

The ledger goes past Optuna's public API for speed in three ways, each with a public fallback:

- its trial writes are SQL statements built on Optuna's table models (`optuna.storages._rdb.models`,
  handed out by `models`; `_trial_writes.py` compiles them), and the writer keeps the study's trials in
  memory (`MirroredStorage`); fallback: the storage's own calls, one commit each;
- `LedgerReader` reads Optuna's tables with the SQL of `QUERIES` and decodes their columns
  (`stored_float`, `stored_time`, `external_value`) without importing Optuna; fallback: `Ledger.load`;
- Optuna's alembic scripts are loaded once per process (`share_alembic_scripts`, which replaces a
  method of `_VersionManager`); fallback: Optuna loads them as it does.

`internals_usable()` says which way to go: the internals only with an Optuna release named in
`TESTED_OPTUNA` (the tests, `tests/autoresearch/campaign/test_ledger_reader.py` and
`test_mirror.py`, check the SQL and the decoding against it). Another release takes the public
paths, slower but never writing a row Optuna would not, with one warning that says so. This module
imports neither Optuna nor SQLAlchemy at import time (the dashboard's reader needs it).
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from compute.releases import installed_version, tested_release

if TYPE_CHECKING:
    from optuna.study._frozen import FrozenStudy as FrozenStudy  # noqa: F401 - re-exported for typing

TESTED_OPTUNA = ("5.0",)
"""The Optuna releases (major.minor) whose tables the ledger's SQL reads and writes."""


def optuna_version() -> str:
    """The installed Optuna's version (from its metadata: Optuna is not imported)."""
    return installed_version("optuna")


@functools.cache
def internals_usable() -> bool:
    """Whether the ledger may use Optuna's internals (checked once per process; warns once if not, on
    the `autoresearch.ledger` log)."""
    return tested_release("optuna", optuna_version(), TESTED_OPTUNA,
                          "the ledger uses Optuna's public API only (slower writes and dashboard reads)",
                          "autoresearch.ledger")


def models() -> ModuleType:
    """Optuna's table models (`optuna.storages._rdb.models`): only when `internals_usable()`."""
    from optuna.storages._rdb import models as optuna_models

    return optuna_models


_SCRIPTS_LOCK = threading.Lock()


def share_alembic_scripts() -> None:
    """Optuna loads its alembic migration scripts (30 modules, ~0.1 s warm, ~0.3 s the first time)
    every time it needs the schema's head revision: once to open a ledger, three times to make one.
    The scripts are those of the installed optuna, so one process needs to load them once: keep
    the first `ScriptDirectory` optuna makes (its revision map loads once) and hand it out again.
    Nothing with an untested Optuna."""
    if not internals_usable():
        return
    from optuna.storages._rdb.storage import _VersionManager

    make = _VersionManager._create_alembic_script
    if getattr(make, "_shared", False):
        return
    scripts: list[Any] = []

    def shared(self: Any) -> Any:
        with _SCRIPTS_LOCK:
            if not scripts:
                scripts.append(make(self))
            return scripts[0]

    shared._shared = True  # type: ignore[attr-defined]
    setattr(_VersionManager, "_create_alembic_script", shared)  # noqa: B010 - a method, not an attribute, to mypy


_IN_IDS = "IN (SELECT value \nFROM json_each(?))"
"""`trial_id IN` the JSON array of ids bound as the one parameter (one statement for any number of ids)."""
QUERIES = {
    "study": "SELECT studies.study_id \nFROM studies \nWHERE studies.study_name = ?",
    "study_attrs": 'SELECT study_user_attributes."key", study_user_attributes.value_json \n'
                   "FROM study_user_attributes \nWHERE study_user_attributes.study_id = ?",
    "trials": "SELECT trials.trial_id, trials.number, trials.state, trials.datetime_start, trials.datetime_complete "
              "\nFROM trials \nWHERE trials.study_id = ? ORDER BY trials.trial_id",
    "values": "SELECT trial_values.trial_id, trial_values.objective, trial_values.value, trial_values.value_type "
              f"\nFROM trial_values \nWHERE trial_values.trial_id {_IN_IDS}",
    "params": "SELECT trial_params.trial_id, trial_params.param_name, trial_params.param_value, "
              f"trial_params.distribution_json \nFROM trial_params \nWHERE trial_params.trial_id {_IN_IDS} "
              "ORDER BY trial_params.param_id",
    "steps": "SELECT trial_intermediate_values.trial_id, trial_intermediate_values.step, "
             "trial_intermediate_values.intermediate_value, trial_intermediate_values.intermediate_value_type "
             f"\nFROM trial_intermediate_values \nWHERE trial_intermediate_values.trial_id {_IN_IDS}",
    "user_attrs": 'SELECT trial_user_attributes.trial_id, trial_user_attributes."key", '
                  "trial_user_attributes.value_json \nFROM trial_user_attributes \n"
                  f"WHERE trial_user_attributes.trial_id {_IN_IDS}",
    "system_attrs": 'SELECT trial_system_attributes.trial_id, trial_system_attributes."key", '
                    "trial_system_attributes.value_json \nFROM trial_system_attributes \n"
                    f"WHERE trial_system_attributes.trial_id {_IN_IDS}",
}  # fmt: skip
"""Each query's SQL, as SQLAlchemy compiles the select on Optuna's models for SQLite (the test
compiles them again and compares)."""

_SPECIAL = {"INF_POS": math.inf, "INF_NEG": -math.inf, "NAN": math.nan}
"""A stored value type (`TrialValueModel.TrialValueType`, `TrialIntermediateValueModel.
TrialIntermediateValueType`: SQLAlchemy stores the member's name) whose value column is NULL ->
the float it stands for; FINITE is the column's value."""


def stored_float(value: float | None, kind: str) -> float:
    """A value or intermediate value as `stored_repr_to_value` / `stored_repr_to_intermediate_value` give it."""
    return _SPECIAL[kind] if kind in _SPECIAL else float(value)  # type: ignore[arg-type]


def stored_time(text: str | None) -> datetime | None:
    """A trial's `DATETIME` column (naive UTC text) as `RDBStorage` hands it out: naive local time."""
    if text is None:
        return None
    return datetime.fromisoformat(text).replace(tzinfo=UTC).astimezone().replace(tzinfo=None)


def external_value(distribution_json: str) -> Callable[[float], Any]:
    """How a parameter's stored (internal) value becomes the value the trial saw, for its stored
    distribution, as `json_to_distribution(...).to_external_repr` does: ints for an int
    distribution, the choice for a categorical, the float itself otherwise."""
    spec = json.loads(distribution_json)
    name = spec.get("name")
    if name in ("FloatDistribution", "UniformDistribution", "LogUniformDistribution", "DiscreteUniformDistribution"):
        return float
    if name in ("IntDistribution", "IntUniformDistribution", "IntLogUniformDistribution"):
        return int
    if name == "CategoricalDistribution":
        choices = spec["attributes"]["choices"]
        return lambda internal: choices[int(internal)]
    from optuna.distributions import json_to_distribution  # a form this ledger never writes

    return json_to_distribution(distribution_json).to_external_repr
