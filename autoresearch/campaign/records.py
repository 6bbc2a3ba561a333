"""Records of a campaign's trials: proposals, trial records, research notes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign.states import TrialFailure, TrialState
from autoresearch.campaign.validity import Provenance


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class Proposal(_Record):
    """One trial a policy wants run: parameters and/or a code patch, and why."""

    params: dict[str, Any] = Field(default_factory=dict)
    """A value for every search-space parameter."""
    patch: str | None = None
    """A code patch (unified diff or search/replace blocks) against the parent trial's version
    of the campaign's editable files (code-edit campaigns)."""
    parent_trial: int | None = None
    """Code-edit campaigns: the trial whose code this one starts from (None: the campaign's cwd)."""
    confirms: int | None = None
    """A confirmation: a re-run of this trial (the origin) with a new seed, to tell its value from
    run-to-run noise (docs/results.md, "Confirmation of the leaders")."""
    suspect_rerun_of: int | None = None
    """A re-run of this suspect trial on another node (its nodes avoided), before it may win."""
    resume_of: int | None = None
    """A continuation of this stopped trial (the nightly window ended while it ran): same
    parameters and seed, started from that trial's checkpoint."""
    rationale: str = ""
    """Why this trial: for people reading the report and for the policy's next turn."""
    hypothesis: str = ""
    """What the trial tests."""
    expected_effect: str = ""
    """What the policy expects the objective to do."""
    trial_number: int | None = None
    """Assigned by the ledger when the trial enters the study; None before."""


class TrialRecord(_Record):
    """One trial as the ledger knows it."""

    number: int
    """Trial number in the campaign's study (0, 1, 2 ...)."""
    state: TrialState
    params: dict[str, Any]
    """Its parameter values."""
    value: float | None = None
    """The objective value (complete trials; the last intermediate value for pruned ones)."""
    intermediate_values: dict[int, float] = Field(default_factory=dict)
    """Step -> value of the objective metric reported while it ran."""
    job_id: str | None = None
    """The compute job running it, once launched."""
    mlflow_run_id: str | None = None
    """Its MLflow run."""
    failure_class: TrialFailure | None = None
    """Why it failed (failed trials only)."""
    failure_rule: str | None = None
    """Failed trials whose job failed: the rule of compute's classifier that matched
    (`command_not_found`, `python_traceback`, `unrecognized` ...); cancelled trials whose job died of
    what is not the trial's fault: that rule (`disk_full`: the campaign pauses on it)."""
    prune_step: int | None = None
    """The step at which the runner asked compute to stop its job for the pruner (recorded before the
    ask; the trial stays running until the job ends, and is pruned then unless it ran to its end)."""
    log_excerpt: str | None = None
    """Failed trials: the tail of the job's log. Cancelled trials: why they were cancelled."""
    patch: str | None = None
    """The code patch it runs with, if any."""
    parent_trial: int | None = None
    """Code-edit campaigns: the trial whose code it starts from (None: the campaign's cwd)."""
    confirms: int | None = None
    """A confirmation: the trial (its origin) it re-runs with a new seed; None for every other trial."""
    suspect_rerun_of: int | None = None
    """The suspect trial it re-runs on another node, if any (both results are kept)."""
    resume_of: int | None = None
    """The stopped trial it continues from that trial's checkpoint, if any."""
    rationale: str = ""
    """Why the policy proposed it."""
    hypothesis: str = ""
    expected_effect: str = ""
    created_at: datetime | None = None
    """When it entered the ledger."""
    started_at: datetime | None = None
    """When its job was launched."""
    ended_at: datetime | None = None
    """When it reached a final state."""
    gpu_seconds: float = 0.0
    """Slot time its job held (GPU slots x seconds), summed over attempts: GPU time when `real_gpus`."""
    real_gpus: bool = False
    """Its job's slots were physical GPUs (False: virtual slots of a host without them, no slots, or
    not recorded), so `gpu_seconds` are GPU-seconds, not just slot-seconds."""
    provenance: Provenance | None = None
    """Where its attempts ran (node, GPUs, GPU model, driver, what the node's probes saw) and its
    speed, recorded when its job ended; None before that or for a trial that never ran."""


class Note(_Record):
    """One entry of the research log."""

    at: datetime
    """When it was written."""
    text: str
    """What was learned or decided."""
    author: str = "policy"
    """Who wrote it: `policy`, `chat`, `runner` ..."""
