"""The lineage of a code-edit campaign: the best kept trial is the parent; gains within the
measured noise are re-run with more seeds before they are kept."""

from __future__ import annotations

from pathlib import Path

from autoresearch.campaign import TrialRecord, TrialState
from autoresearch.policy import lineage

from tests.autoresearch.conftest import toy_campaign


def trial(number: int, value: float | None, *, parent: int | None = None, rerun_of: int | None = None,
          patch: str | None = "p", state: TrialState = TrialState.complete) -> TrialRecord:
    return TrialRecord(number=number, state=state, params={}, value=value, parent_trial=parent,
                       rerun_of=rerun_of, patch=patch)  # fmt: skip


def test_without_noise_seeds_the_best_complete_trial_is_the_parent(toy_project: Path) -> None:
    campaign = toy_campaign(toy_project)
    trials = [trial(0, 4.0, patch=None), trial(1, 1.0, parent=0), trial(2, 2.0, parent=1),
              trial(3, None, parent=1, state=TrialState.failed)]  # fmt: skip
    lin = lineage(campaign, trials)
    assert lin.parent == 1 and lin.baseline == 0 and lin.reruns == []
    assert lin.kept == [0, 1]  # trial 2 is worse than its parent 1


def test_noise_rules(toy_project: Path) -> None:
    campaign = toy_campaign(toy_project, code={"editable": ["train.py"], "fixed": ["evaluation.py"], "noise_seeds": 2})

    # The baseline is re-run to measure the noise; nothing else is judged against an unknown noise yet.
    lin = lineage(campaign, [trial(0, 4.0, patch=None)])
    assert [p.rerun_of for p in lin.reruns] == [0, 0] and lin.parent == 0 and lin.noise_std is None
    assert lin.reruns[0].patch is None and "measures run-to-run noise" in lin.reruns[0].rationale

    base = [trial(0, 4.0, patch=None), trial(1, 4.2, rerun_of=0, patch=None), trial(2, 3.8, rerun_of=0, patch=None)]
    # A gain far beyond the noise (std 0.2) is kept at once.
    lin = lineage(campaign, [*base, trial(3, 1.0, parent=0)])
    assert lin.noise_std is not None and abs(lin.noise_std - 0.2) < 1e-9
    assert lin.parent == 3 and lin.reruns == []

    # A gain within twice the noise is re-run twice (same patch, same parent) before it is kept ...
    small = trial(3, 3.7, parent=0)
    lin = lineage(campaign, [*base, small])
    assert lin.parent == 0 and [(p.rerun_of, p.parent_trial, p.patch) for p in lin.reruns] == [(3, 0, "p")] * 2
    assert "within the noise (std 0.2)" in lin.reruns[0].rationale
    # ... not while its re-runs run ...
    running = [trial(4, None, parent=0, rerun_of=3, state=TrialState.running), trial(5, 3.6, parent=0, rerun_of=3)]
    lin = lineage(campaign, [*base, small, *running])
    assert lin.parent == 0 and lin.reruns == [] and 3 not in lin.kept
    # ... and kept when the mean of its runs still wins ...
    lin = lineage(campaign, [*base, small, trial(4, 3.8, parent=0, rerun_of=3), trial(5, 3.6, parent=0, rerun_of=3)])
    assert lin.parent == 3 and abs(lin.means[3] - 3.7) < 1e-9
    # ... or dropped when it was luck.
    lin = lineage(campaign, [*base, small, trial(4, 4.4, parent=0, rerun_of=3), trial(5, 4.3, parent=0, rerun_of=3)])
    assert lin.parent == 0 and 3 not in lin.kept and lin.reruns == []
