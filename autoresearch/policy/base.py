"""The `Policy` seam: what proposes a campaign's trials and decides, after each round,
whether to go on.

Rules every policy keeps:

- `propose(ctx, n)` returns at most `n` proposals (fewer: nothing more worth trying now).
  A proposal either carries a `trial_number` (the policy asked the trial from the
  campaign's study itself, as Optuna does) or none (an LLM's idea); the runner passes each
  to `TrialLedger.admit`, which numbers the second kind. Every proposal in one call is complete
  (all its parameters drawn) when `propose` returns: results are told only afterwards.
- Only the ledger ends trials (complete, prune, fail, cancel). A policy reads results from
  `ctx.trials`; it never tells values to the study itself.
- `replan(ctx)` returns notes (appended to the research log) and continue or stop. Budget
  and target limits are checked by the runner, not by the policy.
- Optional abilities are separate protocols, checked with isinstance: `Pruning` judges
  running trials from their intermediate values.

A policy is used from one thread.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign import BudgetUsed, Campaign, Note, Proposal, TrialLedger, TrialRecord, campaign_status


class PolicyError(Exception):
    """A policy cannot be built or cannot run with this campaign; the message says what to change."""


class PolicyPause(Exception):
    """The policy asks the runner to pause the campaign (`policy.fallback: pause`); the message is
    the reason, saying what to change before `autoresearch resume NAME`."""


class ReplanAction(str, enum.Enum):
    """What the campaign does after a replan."""

    continue_ = "continue"
    stop = "stop"


class ReplanDecision(BaseModel):
    """The outcome of a replan."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    action: ReplanAction = ReplanAction.continue_
    notes: str = ""
    """What was learned this round (empty: nothing new); appended to the research log."""
    reason: str = ""
    """Why it continues or stops, for the log and the report."""


class PruneDecision(str, enum.Enum):
    """Whether a running trial goes on."""

    keep = "keep"
    prune = "prune"


class PolicyContext(BaseModel):
    """What a policy sees when it proposes or replans."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    campaign: Campaign
    """The campaign config (objective, search space, budget ...)."""
    trials: list[TrialRecord] = Field(default_factory=list)
    """Every trial so far, by number, with results and rationales."""
    notes: list[Note] = Field(default_factory=list)
    """The research log so far."""
    steering: list[str] = Field(default_factory=list)
    """Messages from people (chat) not yet acted on, oldest first."""
    budget_used: BudgetUsed | None = None
    """How much of the budget is spent."""

    @classmethod
    def from_ledger(cls, ledger: TrialLedger, steering: Sequence[str] = ()) -> PolicyContext:
        """The context of the campaign whose ledger this is."""
        status = campaign_status(ledger)
        return cls(
            campaign=ledger.campaign,
            trials=ledger.trials(),
            notes=ledger.notes(),
            steering=list(steering),
            budget_used=status.budget_used,
        )


@runtime_checkable
class Policy(Protocol):
    """Proposes trials and replans. See the module docstring for the rules."""

    def propose(self, ctx: PolicyContext, n: int) -> list[Proposal]: ...

    def replan(self, ctx: PolicyContext) -> ReplanDecision: ...


@runtime_checkable
class Pruning(Protocol):
    """A policy that stops losing trials early. The runner cancels the job of a pruned trial."""

    def judge(self, trial: TrialRecord) -> PruneDecision:
        """Keep or prune a running trial, from the intermediate values the ledger holds."""
        ...
