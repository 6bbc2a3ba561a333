"""How the Optuna ledger keeps things in an Optuna RDB study: the SQLite storage and its
schema lock, a stored trial as a `TrialRecord` (`record_fields`, the one mapping, which both the
ledger's `FrozenTrial`s and `LedgerReader`'s rows go through), and `CampaignFacts` as study user
attributes. Optuna and SQLAlchemy are imported only to open the storage, so the dashboard's
reader, which needs this module, loads neither."""

from __future__ import annotations

import fcntl
import functools
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.campaign.ledger._optuna_internals import share_alembic_scripts
from autoresearch.campaign.paths import CampaignPaths
from autoresearch.campaign.states import TrialState

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

    from autoresearch.campaign.ledger.facts import CampaignFacts
    from autoresearch.campaign.records import TrialRecord
    from autoresearch.campaign.views import TrialView

FACT_ATTRS = {
    "started_at": "started_at",
    "state": "state",
    "state_reason": "state_reason",
    "ended_at": "ended_at",
    "llm_usd": "llm_usd",
    "llm_usage": "llm_usage",
    "llm_run_id": "llm_mlflow_run",
    "mlflow_experiment_id": "mlflow_experiment_id",
    "notes": "notes",
    "active_s": "active_s",
    "run_started_at": "run_started_at",
    "holdouts": "holdouts",
}
"""CampaignFacts field -> the study user attribute that holds it (names kept from older ledgers)."""
CONFIG_ATTR = "campaign"
"""The study user attribute holding the campaign config (JSON)."""


def facts_from_attrs(attrs: dict[str, Any]) -> CampaignFacts:
    """The facts kept in a study's user attributes (absent ones take their defaults)."""
    from autoresearch.campaign.ledger.facts import CampaignFacts

    return CampaignFacts.model_validate(stored_facts(attrs))


def stored_facts(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """CampaignFacts field -> its stored JSON value, for those a study's user attributes hold."""
    return {field: attrs[key] for field, key in FACT_ATTRS.items() if attrs.get(key) is not None}


def fact_attrs(facts: CampaignFacts, fields: set[str]) -> dict[str, Any]:
    """The user attributes (JSON values) that hold `fields` of `facts`."""
    data = facts.model_dump(mode="json", include=fields)
    return {FACT_ATTRS[field]: data[field] for field in fields}


@contextmanager
def schema_lock(folder: Path, *, exclusive: bool) -> Iterator[None]:
    """Creating a ledger (schema, study, config) holds this lock exclusively and loading one holds
    it shared, so a reader (`autoresearch status` in a campaign's first second) never meets a
    half-made store nor races to create the schema ("table studies already exists")."""
    with open(CampaignPaths(folder).ledger_lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def sqlite_storage(path: Path) -> optuna.storages.RDBStorage:
    """RDB storage on SQLite in WAL mode: readers (status, dashboard) never block the runner,
    and a commit survives the process being killed. Every connection, the first included (the
    one optuna makes its tables with: 15 statements, each an fsync'd commit without WAL), is
    opened with the pragmas."""
    import optuna

    share_alembic_scripts()
    return optuna.storages.RDBStorage(storage_url(path), engine_kwargs={"creator": functools.partial(_connect, path)})


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(str(path), timeout=30, check_same_thread=False)  # the pool hands it to any thread
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def storage_url(path: Path) -> str:
    """The ledger file's Optuna storage URL (`optuna-dashboard sqlite:///...`)."""
    return f"sqlite:///{path}"


def half_drawn(record: TrialRecord | TrialView, space: Mapping[str, Any]) -> bool:
    """A proposed trial some of whose parameters are not committed yet: a reader that comes between
    the writer's `ask` and that commit leaves it out (it is not a trial yet)."""
    return record.state is TrialState.proposed and any(name not in record.params for name in space)


def _aware(value: datetime | None) -> datetime | None:
    return value.astimezone() if value is not None else None


STATES = {
    "WAITING": TrialState.proposed,
    "RUNNING": TrialState.running,
    "COMPLETE": TrialState.complete,
    "PRUNED": TrialState.pruned,
    "FAIL": TrialState.failed,
}
"""An Optuna `TrialState` name (as the trials table stores it) -> our state, before the user
attributes refine it (a RUNNING trial without a job is still proposed; a FAIL that was cancelled)."""


def trial_record(t: FrozenTrial) -> TrialRecord:
    """Optuna's trial as the ledger's record (`record_fields`, validated)."""
    from autoresearch.campaign.records import TrialRecord

    return TrialRecord(**record_fields(t.number, t.state.name, t.params, t.values, t.intermediate_values,
                                       t.user_attrs, t.system_attrs, t.datetime_start, t.datetime_complete))  # fmt: skip


def record_fields(
    number: int,
    state_name: str,
    params: Mapping[str, Any],
    values: list[float] | None,
    intermediate_values: Mapping[int, float],
    user_attrs: Mapping[str, Any],
    system_attrs: Mapping[str, Any],
    datetime_start: datetime | None,
    datetime_complete: datetime | None,
) -> dict[str, Any]:
    """A stored trial's `TrialRecord` fields, the one mapping (our metadata are its user attributes;
    `TrialRecord` validates them, `views.TrialView` reads them); the datetimes are naive local
    time, as `RDBStorage` hands them out."""
    attrs = user_attrs
    state = STATES[state_name]
    if state is TrialState.running and not attrs.get("job_id"):
        state = TrialState.proposed
    elif state is TrialState.failed and attrs.get("cancelled"):
        state = TrialState.cancelled
    started = attrs.get("started_at")
    if state_name == "WAITING":
        params = system_attrs.get("fixed_params", {})
    return dict(
        number=number,
        state=state,
        params=dict(params),
        value=values[0] if values and state_name in ("COMPLETE", "PRUNED") else None,
        intermediate_values=dict(intermediate_values),
        job_id=attrs.get("job_id"),
        mlflow_run_id=attrs.get("mlflow_run_id"),
        failure_class=attrs.get("failure_class"),
        failure_rule=attrs.get("failure_rule"),
        prune_step=attrs.get("prune_step"),
        log_excerpt=attrs.get("log_excerpt") or None,
        patch=attrs.get("patch"),
        parent_trial=attrs.get("parent_trial"),
        confirms=attrs.get("confirms", attrs.get("rerun_of")),  # rerun_of: code.noise_seeds' re-runs, before `confirm:`
        resume_of=attrs.get("resume_of"),
        suspect_rerun_of=attrs.get("suspect_rerun_of"),
        provenance=attrs.get("provenance"),
        rationale=attrs.get("rationale", ""),
        hypothesis=attrs.get("hypothesis", ""),
        expected_effect=attrs.get("expected_effect", ""),
        created_at=_aware(datetime_start),
        started_at=datetime.fromisoformat(started) if started else None,
        ended_at=_aware(datetime_complete),
        gpu_seconds=float(attrs.get("gpu_seconds", 0.0)),
        real_gpus=bool(attrs.get("real_gpus", False)),
    )
