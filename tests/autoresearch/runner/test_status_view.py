"""The status table: failed trials' class and reason, the stop reason, and when it shows only the latest."""

from __future__ import annotations

from rich.console import Console

from autoresearch.campaign import BudgetUsed, CampaignState, CampaignStatus, TrialFailure, TrialState, TrialSummary
from autoresearch.runner.display import render_status, summary_line


def _status(state: CampaignState, trials: list[TrialSummary], reason: str = "") -> CampaignStatus:
    used = BudgetUsed(trials=len(trials), gpu_hours=0.0, llm_usd=0.0, elapsed=5.0)
    return CampaignStatus(name="c", state=state, state_reason=reason, budget_used=used, best_trial=None, trials=trials)


def _text(status: CampaignStatus) -> str:
    console = Console(width=250, record=True)
    console.print(render_status(status, 40))
    return console.export_text()


def test_the_table_shows_failures_the_reason_and_that_it_shows_only_the_latest() -> None:
    trials = [TrialSummary(number=n, state=TrialState.failed, params={"x": 1.0}, value=None, job_id=f"job-{n}",
                           mlflow_run_id=None, failure_class=TrialFailure.user, reason=f"KeyError: 'lr{n}'")
              for n in range(15)]  # fmt: skip
    text = _text(_status(CampaignState.failed, trials, "the setup looks broken: trials 0, 1, 2 ..."))
    assert "failed: the setup looks broken" in text
    assert "user: KeyError: 'lr14'" in text and "'lr0'" not in text
    assert "showing the latest 12 of 15 trials" in text
    assert "no trial completed" in summary_line(_status(CampaignState.completed, trials), 40)
    assert "no result yet" in summary_line(_status(CampaignState.running, trials), 40)
    assert "showing the latest" not in _text(_status(CampaignState.running, trials[:3]))
