"""The lineage of a code-edit campaign: the best kept trial by mean is the parent; a leader's
confirmations (`confirm:`) decide whether its gain was noise."""

from __future__ import annotations

from pathlib import Path

from autoresearch.campaign import TrialRecord, TrialState, confirmations_due
from autoresearch.policy import lineage

from tests.autoresearch.conftest import toy_campaign


def trial(number: int, value: float | None, *, parent: int | None = None, confirms: int | None = None,
          patch: str | None = "p", state: TrialState = TrialState.complete) -> TrialRecord:
    return TrialRecord(number=number, state=state, params={}, value=value, parent_trial=parent,
                       confirms=confirms, patch=patch)  # fmt: skip


def test_without_confirmations_the_best_complete_trial_is_the_parent(toy_project: Path) -> None:
    campaign = toy_campaign(toy_project)
    trials = [trial(0, 4.0, patch=None), trial(1, 1.0, parent=0), trial(2, 2.0, parent=1),
              trial(3, None, parent=1, state=TrialState.failed)]  # fmt: skip
    lin = lineage(campaign, trials)
    assert lin.parent == 1 and lin.runs == {0: 1, 1: 1, 2: 1}
    assert lin.kept == [0, 1]  # trial 2 is worse than its parent 1


def test_a_new_best_is_confirmed_and_its_mean_decides(toy_project: Path) -> None:
    code = {"editable": ["train.py"], "fixed": ["evaluation.py"]}
    campaign = toy_campaign(toy_project, code=code, confirm={"top_k": 1, "seeds": 2, "when": "new_best"})
    base = [trial(0, 4.0, patch=None), trial(1, 4.2, confirms=0, patch=None), trial(2, 3.8, confirms=0, patch=None)]
    small = trial(3, 3.7, parent=0)

    # The new best is re-run at once with its own code (same patch, same parent) ...
    due = confirmations_due(campaign, [*base, small], 4)
    assert [(p.confirms, p.parent_trial, p.patch) for p in due] == [(3, 0, "p")] * 2
    assert lineage(campaign, [*base, small]).parent == 0  # a single reading does not displace a confirmed mean
    # ... kept when the mean of its runs still wins ...
    lin = lineage(campaign, [*base, small, trial(4, 3.8, parent=0, confirms=3), trial(5, 3.6, parent=0, confirms=3)])
    assert lin.parent == 3 and abs(lin.means[3] - 3.7) < 1e-9 and lin.runs[3] == 3
    # ... or dropped when it was luck: the parent is the baseline again, and nothing more is due.
    trials = [*base, small, trial(4, 4.4, parent=0, confirms=3), trial(5, 4.3, parent=0, confirms=3)]
    lin = lineage(campaign, trials)
    assert lin.parent == 0 and 3 not in lin.kept and confirmations_due(campaign, trials, 4) == []
