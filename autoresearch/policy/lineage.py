"""The lineage of a code-edit campaign: which trial new proposals start from, and noise re-runs.

A *candidate* is a trial that is not a re-run; its *runs* are itself and its re-runs (same
parent, patch and parameters, another `{seed}` because the seed is derived from the trial
number). A candidate's value is the mean of its complete runs.

With `code.noise_seeds: N` (N > 0):
- the baseline (the first root trial without a patch, else the first root trial) is re-run N
  times; the spread of its values is the measured noise (sample standard deviation);
- a candidate that beats its reference (its parent; for a root trial, the baseline) by no more
  than twice the noise (or while the noise is not known yet) is re-run N times before it is
  kept, and is kept only if the mean of its runs still beats the reference's mean.
With N = 0 every complete candidate is kept at once.

The parent of new proposals is the kept candidate with the best mean (the earliest on ties).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import Campaign, Proposal, TrialRecord, TrialState


class Lineage(BaseModel):
    """Where a code-edit campaign's code stands."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    parent: int | None
    """The trial new proposals start from (None: the campaign's cwd, before any result)."""
    baseline: int | None
    """The trial whose re-runs measure the noise."""
    noise_std: float | None
    """Sample standard deviation of the baseline's runs (None until it has two)."""
    means: dict[int, float]
    """Candidate -> mean of its complete runs."""
    kept: list[int]
    """Candidates kept (eligible as parents), by number."""
    reruns: list[Proposal]
    """Re-runs still to propose, oldest candidate first."""


def lineage(campaign: Campaign, trials: list[TrialRecord]) -> Lineage:
    """The lineage of `campaign` from its trials."""
    seeds = campaign.code.noise_seeds if campaign.code else 0
    objective = campaign.objective
    by_number = {t.number: t for t in trials}
    runs: dict[int, list[TrialRecord]] = defaultdict(list)
    for t in trials:
        if t.state is not TrialState.cancelled:
            runs[t.rerun_of if t.rerun_of is not None else t.number].append(t)
    candidates = [n for n in sorted(runs) if n in by_number and by_number[n].rerun_of is None]
    means = {}
    for n in candidates:
        values = [t.value for t in runs[n] if t.state is TrialState.complete and t.value is not None]
        if values:
            means[n] = statistics.fmean(values)
    roots = [n for n in candidates if by_number[n].parent_trial is None and n in means]
    baseline = next((n for n in roots if not by_number[n].patch), roots[0] if roots else None)
    base_runs = runs[baseline] if baseline is not None else []
    base_values = [t.value for t in base_runs if t.state is TrialState.complete and t.value is not None]
    noise = statistics.stdev(base_values) if len(base_values) >= 2 else None

    def reference(n: int) -> int | None:
        parent = by_number[n].parent_trial
        return parent if parent is not None else (baseline if baseline != n else None)

    def needs_reruns(n: int) -> bool:
        if seeds == 0 or n not in means:
            return False
        if n == baseline:
            return True
        ref = reference(n)
        if ref is None or ref not in means or not objective.better(means[n], means[ref]):
            return False
        return noise is None or abs(means[n] - means[ref]) <= 2 * noise

    kept: list[int] = []
    reruns: list[Proposal] = []
    for n in candidates:
        if n not in means:
            continue
        done = len(runs[n]) - 1
        settled = all(t.state.final for t in runs[n])
        if needs_reruns(n) and done < seeds:
            reruns.extend(_rerun(by_number[n], reference(n), noise) for _ in range(seeds - done))
            if n != baseline:
                continue
        if n != baseline and needs_reruns(n) and not settled:
            continue
        ref = reference(n)
        if ref is None or n == baseline or ref not in means or objective.better(means[n], means[ref]):
            kept.append(n)
    parent = None
    for n in kept:
        if parent is None or objective.better(means[n], means[parent]):
            parent = n
    return Lineage(parent=parent, baseline=baseline, noise_std=noise, means=means, kept=kept, reruns=reruns)


def _rerun(trial: TrialRecord, reference: int | None, noise: float | None) -> Proposal:
    if reference is None:
        why = "measures run-to-run noise: the same code with another seed"
    else:
        spread = "not measured yet" if noise is None else f"{noise:.4g}"
        why = f"its gain over trial {reference} is within the noise (std {spread}); the same code with another seed"
    return Proposal(
        params=trial.params,
        patch=trial.patch,
        parent_trial=trial.parent_trial,
        rerun_of=trial.number,
        rationale=f"re-run of trial {trial.number}: {why}",
        hypothesis=trial.hypothesis,
        expected_effect=trial.expected_effect,
    )
