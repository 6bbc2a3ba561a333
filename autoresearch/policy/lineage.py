"""The lineage of a code-edit campaign: which trial new proposals start from.

A *candidate* is a trial that is not a confirmation; its value is the mean of its complete runs
(itself and its confirmations: `campaign.confirmation.standings`, the one place a mean is taken).
A candidate is *kept* when its mean beats its reference's (its parent's; a root trial is kept).
The parent of new proposals is the first kept candidate in the declared order (`declared_order`:
confirmed candidates by mean first; the earliest on ties).

Telling a gain from run-to-run noise is the `confirm:` section's work (docs/results.md): with
`when: new_best` a new leader is re-run with new seeds at once, and its mean decides whether it
stays the parent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import Campaign, TrialRecord, declared_order


class Lineage(BaseModel):
    """Where a code-edit campaign's code stands."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    parent: int | None
    """The trial new proposals start from (None: the campaign's cwd, before any result)."""
    means: dict[int, float]
    """Candidate -> mean of its complete runs."""
    runs: dict[int, int]
    """Candidate -> how many complete runs the mean is over."""
    kept: list[int]
    """Candidates kept (eligible as parents), by number."""


def lineage(campaign: Campaign, trials: list[TrialRecord]) -> Lineage:
    """The lineage of `campaign` from its trials."""
    objective = campaign.objective
    ranking = declared_order(trials, objective)
    means = {s.trial: s.mean for s in ranking}
    by_number = {t.number: t for t in trials}
    kept = []
    for n in sorted(means):
        ref = by_number[n].parent_trial
        if ref is None or ref not in means or objective.better(means[n], means[ref]):
            kept.append(n)
    parent = next((s.trial for s in ranking if s.trial in kept), None)
    return Lineage(parent=parent, means=means, runs={s.trial: s.n for s in ranking}, kept=kept)
