"""The report's "Confirmation of the leaders" section: the leaders' means over their runs."""

from __future__ import annotations

from autoresearch.campaign import Campaign, TrialRecord, declared_ranking, winner_text

SHOWN = 5
"""Leaders listed at least (more when confirm.top_k is larger)."""


def confirmation_section(campaign: Campaign, trials: list[TrialRecord]) -> list[str]:
    """The section, for a campaign with `confirm:` or confirmation trials (else nothing)."""
    ranking = declared_ranking(trials, campaign)
    if campaign.confirm is None and not any(s.confirmations for s in ranking):
        return []
    lines = ["## Confirmation of the leaders", ""]
    if campaign.confirm is not None:
        c = campaign.confirm
        lines += [f"The top {c.top_k} configurations are re-run with {c.seeds} new seed(s) each (`when: {c.when.value}`); "
                  "the winner is the confirmed configuration with the best mean. It is separable when its mean beats the runner-up's by more than "
                  "2 sd (sd: the larger of the two sample standard deviations).", ""]  # fmt: skip
    if not ranking:
        return lines + ["No trial has completed yet.", ""]
    lines += [f"**Winner: {winner_text(ranking, campaign.objective)}.**", "",
              f"| # | {campaign.objective.metric} (mean ± sd) | n | confirmations |", "| --- | --- | --- | --- |"]  # fmt: skip
    shown = max(SHOWN, campaign.confirm.top_k if campaign.confirm else 0)
    for s in ranking[:shown]:
        confirmations = ", ".join(f"#{n}" for n in s.confirmations) or "none"
        spread = f" ± {s.sd:.2g}" if s.sd is not None else ""
        lines.append(f"| {s.trial} | {s.mean:.6g}{spread} | {s.n} | {confirmations} |")
    return lines + [""]
