"""The live view and the plain lines show budget used, best so far, running and pending trials."""

from __future__ import annotations

import io

from rich.console import Console

from autoresearch.campaign import BudgetUsed, CampaignState, CampaignStatus, TrialState, TrialSummary
from autoresearch.runner import LiveDisplay, PlainDisplay, make_display
from autoresearch.runner.display import QuietDisplay


def _status() -> CampaignStatus:
    def trial(n: int, state: TrialState, value: float | None) -> TrialSummary:
        return TrialSummary(number=n, state=state, params={"lr": 0.01 * (n + 1), "act": "relu"}, value=value,
                            job_id=f"job-{n:010x}", mlflow_run_id=f"run{n}")  # fmt: skip

    trials = [trial(0, TrialState.complete, 0.91), trial(1, TrialState.complete, 0.95),
              trial(2, TrialState.running, None), trial(3, TrialState.proposed, None)]  # fmt: skip
    return CampaignStatus(
        name="demo", state=CampaignState.running, trials=trials, best_trial=trials[1],
        budget_used=BudgetUsed(trials=4, gpu_hours=0.5, llm_usd=0.0, elapsed=125.0),
    )  # fmt: skip


def test_plain_lines_carry_the_summary_and_events():
    out = io.StringIO()
    display = PlainDisplay(out, every_s=0)
    display.event("trial 2 launched as job-0000000002")
    display.update(_status(), max_trials=10)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("trial 2 launched as job-0000000002")
    assert "demo running | trials 4/10 (1 running, 1 pending) | best #1 0.95 | 2m05s, 0.50 slot-hours" in lines[1]


def test_the_live_view_shows_the_trials_table_with_the_best_marked():
    out = io.StringIO()
    display = LiveDisplay(Console(file=out, force_terminal=True, width=120))
    display.update(_status(), max_trials=10)
    display.close()
    text = out.getvalue()
    assert "trials 4/10" in text and "best #1 0.95" in text
    assert "1 *" in text and "running" in text and "job-0000000002" in text


def test_make_display_picks_by_terminal_and_quiet():
    assert isinstance(make_display(quiet=True), QuietDisplay)
    assert isinstance(make_display(stream=io.StringIO()), PlainDisplay)
