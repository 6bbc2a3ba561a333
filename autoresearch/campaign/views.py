"""A campaign's stored config, facts and trials as plain attribute views, importing no pydantic.

A reader that only computes from a ledger (`autoresearch status`, polled by agents) reads these
instead of validating the records (`Campaign`, `CampaignFacts`, `TrialRecord`): each view has the
attributes that the status computation (`autoresearch.campaign.status_core`) and the ranking
functions read, with the values the records would hold (enums, floats, datetimes). They are read
only from what a ledger stored, which those records wrote (`model_dump(mode="json")`); a config is
read as a view only once this code accepted it (`ledger._integrity.checked_config`).

The few facts a record derives from its fields live here once, and the records use them:
`direction_of` (`Objective.direction`), `gpu_model_of` and `nodes_of` (`Provenance`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from autoresearch.campaign.states import CampaignState, TrialFailure, TrialState

VIRTUAL_GPU = "virtual"
"""The GPU model recorded for a virtual node's slots (no physical GPU behind them)."""
STEPS_PER_S = "steps/s"
"""A trial's speed unit unless `validity.speed_metric` names another."""
MIN_SPEED_RATIO = 0.85
"""`validity.min_speed_ratio` when the config does not set it."""


class _Attempt(Protocol):
    @property
    def node(self) -> str: ...

    @property
    def gpu_model(self) -> str: ...


def direction_of(mode: str) -> Literal["maximize", "minimize"]:
    """Optuna's name for an objective's mode (`max` or `min`)."""
    return "maximize" if mode == "max" else "minimize"


def gpu_model_of(attempts: Sequence[_Attempt]) -> str:
    """The GPU model of the last attempt (what a trial's speed is compared within)."""
    return attempts[-1].gpu_model if attempts else VIRTUAL_GPU


def nodes_of(attempts: Sequence[_Attempt]) -> list[str]:
    """The nodes the attempts ran on, in order, without repeats."""
    return list(dict.fromkeys(a.node for a in attempts))


class _View:
    def __repr__(self) -> str:
        return f"{type(self).__name__}({vars(self)})"


class AttemptView(_View):
    """One stored `AttemptProvenance`."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.attempt: int = data["attempt"]
        self.node: str = data["node"]
        self.gpu_model: str = data.get("gpu_model", VIRTUAL_GPU)
        self.degraded: list[str] = list(data.get("degraded") or [])


class ProvenanceView(_View):
    """One stored `Provenance`."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.attempts = [AttemptView(a) for a in data.get("attempts") or []]
        speed = data.get("speed")
        self.speed: float | None = None if speed is None else float(speed)
        self.speed_unit: str = data.get("speed_unit", STEPS_PER_S)

    @property
    def gpu_model(self) -> str:
        return gpu_model_of(self.attempts)

    @property
    def nodes(self) -> list[str]:
        return nodes_of(self.attempts)


class TrialView(_View):
    """A stored trial: the fields `ledger._optuna_store.record_fields` maps it to (what `TrialRecord`
    validates), with its failure class and provenance typed; without `intermediate_values` (status
    never reads them: the reader leaves their rows, most of a ledger's, unread)."""

    number: int
    state: TrialState
    params: dict[str, Any]
    value: float | None
    job_id: str | None
    mlflow_run_id: str | None
    log_excerpt: str | None
    confirms: int | None
    suspect_rerun_of: int | None
    gpu_seconds: float
    real_gpus: bool
    ended_at: datetime | None

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.__dict__.update(fields)
        del self.__dict__["intermediate_values"]
        failure = fields.get("failure_class")
        self.failure_class: TrialFailure | None = None if failure is None else TrialFailure(failure)
        provenance = fields.get("provenance")
        self.provenance: ProvenanceView | None = None if provenance is None else ProvenanceView(provenance)


class HoldoutResultView(_View):
    """One stored `HoldoutResult`."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.trial: int = data["trial"]
        self.job_id: str = data["job_id"]
        value = data.get("value")
        self.value: float | None = None if value is None else float(value)
        self.error: str = data.get("error", "")


class FactsView(_View):
    """The stored `CampaignFacts` that status reads (`facts`: field -> stored JSON value; an absent
    field is one the ledger never wrote: its empty value)."""

    def __init__(self, facts: Mapping[str, Any]) -> None:
        self.state = CampaignState(facts.get("state", CampaignState.running.value))
        self.state_reason: str = facts.get("state_reason", "")
        self.llm_usd = float(facts.get("llm_usd", 0.0))
        self.active_s = float(facts.get("active_s", 0.0))
        started = facts.get("run_started_at")
        self.run_started_at = None if started is None else datetime.fromisoformat(started)
        self.holdouts = tuple(HoldoutResultView(h) for h in facts.get("holdouts") or ())


class _Objective(_View):
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.metric: str = data["metric"]
        self.direction = direction_of(data["mode"])
        holdout = data.get("holdout")
        self.holdout = None if holdout is None else _Holdout(holdout["metric"])


class _Holdout(_View):
    def __init__(self, metric: str) -> None:
        self.metric = metric


class _Validity(_View):
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.min_speed_ratio = float(data.get("min_speed_ratio", MIN_SPEED_RATIO))


class _Budget(_View):
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.max_trials: int = data["max_trials"]


class ConfigView(_View):
    """A stored `Campaign` config (its JSON, which this code accepted): the sections status reads."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.name: str = data["name"]
        self.objective = _Objective(data["objective"])
        self.validity = _Validity(data.get("validity") or {})
        self.budget = _Budget(data["budget"])
        self.search_space: dict[str, Any] = dict(data.get("search_space") or {})


__all__ = ["MIN_SPEED_RATIO", "STEPS_PER_S", "VIRTUAL_GPU", "AttemptView", "ConfigView", "FactsView",
           "HoldoutResultView", "ProvenanceView", "TrialView", "direction_of", "gpu_model_of", "nodes_of"]
