"""MLflow tags of confirmation: on a confirmed origin's run its mean, sd and n over its runs;
on the winner's run whether it is separable from the runner-up (docs/results.md)."""

from __future__ import annotations

from autoresearch.campaign import Campaign, TrialRecord, declared_ranking, separable, standings
from tracking import CONFIRM_MEAN_TAG, CONFIRM_N_TAG, CONFIRM_SD_TAG, SEPARABLE_TAG, Tracker


def tag_origin(tracker: Tracker, campaign: Campaign, trials: list[TrialRecord], ended: TrialRecord) -> None:
    """After confirmation `ended` ended: its origin's run gets the mean, sd and n of its runs
    (nothing for a trial that confirms none: an origin is tagged once a confirmation adds to it)."""
    origin = ended.confirms
    if origin is None:
        return
    by_number = {t.number: t for t in trials}
    standing = next((s for s in standings(trials, campaign.objective) if s.trial == origin), None)
    run_id = by_number[origin].mlflow_run_id if origin in by_number else None
    if standing is None or run_id is None:
        return
    tags = {CONFIRM_MEAN_TAG: repr(standing.mean), CONFIRM_N_TAG: str(standing.n)}
    if standing.sd is not None:
        tags[CONFIRM_SD_TAG] = repr(standing.sd)
    tracker.log(run_id, tags=tags)


def tag_winner(tracker: Tracker, campaign: Campaign, trials: list[TrialRecord]) -> None:
    """When the campaign ends: the winner's run says whether it is separable from the runner-up."""
    ranking = declared_ranking(trials, campaign)
    if campaign.confirm is None or len(ranking) < 2:
        return
    run_id = next(t.mlflow_run_id for t in trials if t.number == ranking[0].trial)
    if run_id is not None:
        tracker.log(run_id, tags={SEPARABLE_TAG: "true" if separable(ranking[0], ranking[1], campaign.objective) else "false"})
