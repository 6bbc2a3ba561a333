"""The states of trials and campaigns, and why a trial failed: plain enums (no pydantic), so
readers that only compute (`autoresearch status`) can use them without the records' models."""

from __future__ import annotations

import enum


class TrialState(str, enum.Enum):
    """Where a trial is. complete, pruned, failed and cancelled are final."""

    proposed = "proposed"
    """In the ledger, no job yet (also: asked before a crash and never launched)."""
    running = "running"
    """Its job was submitted (it may be pending in the compute queue)."""
    complete = "complete"
    pruned = "pruned"
    """Stopped early by the pruner from its intermediate values."""
    failed = "failed"
    cancelled = "cancelled"
    """Stopped without a verdict (campaign stopped, person cancelled); not a result."""

    @property
    def final(self) -> bool:
        return self not in (TrialState.proposed, TrialState.running)


class TrialFailure(str, enum.Enum):
    """Why a trial failed. The first three are compute's failure classes."""

    user = "user"
    """The training code failed (traceback, non-zero exit)."""
    resource = "resource"
    """Out of memory or another resource limit."""
    infra = "infra"
    """The node failed and compute's infra retries ran out."""
    timed_out = "timed_out"
    """It ran past compute.time_limit_s."""
    no_metric = "no_metric"
    """The job succeeded but never reported the objective metric."""
    non_finite = "non_finite"
    """The objective was NaN or infinite."""
    bad_patch = "bad_patch"
    """The proposed code patch did not apply."""
    not_launched = "not_launched"
    """The campaign failed before the trial got a job (the reason is in its log excerpt)."""


class CampaignState(str, enum.Enum):
    """Where a campaign is. completed, stopped and failed are final."""

    running = "running"
    paused = "paused"
    """A person paused it (chat); running trials finish, no new ones start."""
    completed = "completed"
    """It ended on its budget or target."""
    stopped = "stopped"
    """A person or the policy stopped it before the budget ran out."""
    failed = "failed"
    """The runner could not go on (see the state reason)."""
    interrupted = "interrupted"
    """Shown, never stored: the ledger says running but no runner holds the campaign's lock (Ctrl-C,
    a killed runner). `autoresearch resume NAME` continues it."""
