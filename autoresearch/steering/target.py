"""`SteeringTarget`: what steering commands act on. The runner's context (`RunContext`) is one.

Rules for an implementation:
- it is used from the runner's thread only (the runner is the ledger's single writer);
- `retarget(campaign)` makes every part of the runner use `campaign` before it returns: the
  ledger stores it and the policy is rebuilt on it, so the next proposal uses the new space;
- `stop` and `cancel_trial` are idempotent (a runner killed after applying a command and before
  marking it handled applies it again on resume).
"""

from __future__ import annotations

from typing import Protocol

from autoresearch.campaign import Campaign, CampaignPaths, Ledger, TrialRecord
from autoresearch.steering.approvals import ApprovalBook
from autoresearch.steering.window import Window
from compute import Client


class SteeringTarget(Protocol):
    """One running campaign, as steering sees it."""

    ledger: Ledger
    paths: CampaignPaths
    client: Client
    book: ApprovalBook
    window: Window

    def event(self, text: str) -> None:
        """Tell the person watching the runner (its display)."""

    def stop(self, reason: str) -> None:
        """Cancel the running trials' jobs; the campaign ends as stopped with `reason`."""

    def cancel_trial(self, trial: TrialRecord, reason: str) -> None:
        """Cancel one trial and its job, without a verdict on its parameters."""

    def retarget(self, campaign: Campaign) -> None:
        """Go on with `campaign` (see the module docstring)."""
