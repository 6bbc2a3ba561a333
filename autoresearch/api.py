"""The Python API, mirroring the CLI: run, resume, status, report, and steering posts.

from autoresearch import api
outcome = api.run("examples/digits/campaign.yaml", max_trials=8)
print(api.status("digits-mlp").best_trial)
api.post("digits-mlp", api.Pause(reason="checking the data"))   # any `autoresearch.steering` command
api.report("digits-mlp")            # -> $AUTORESEARCH_HOME/campaigns/digits-mlp/report/report.md
"""

from __future__ import annotations

import os
from pathlib import Path

from autoresearch.campaign import (
    Campaign,
    CampaignOverview,
    CampaignPaths,
    CampaignStatus,
    Ledger,
    campaign_status,
    load_campaign,
    overview,
    read_overviews,
    read_status,
)
from autoresearch.report import write_report
from tracking import wait_drained
from autoresearch.runner import (
    Display,
    PolicyFactory,
    RunnerBusy,
    RunnerError,
    RunnerSettings,
    RunOutcome,
    Start,
    run_campaign,
)
from autoresearch.runner.detach import Detached, start_detached
from autoresearch.steering import (
    Approve,
    CancelTrial,
    Command,
    Deny,
    Note,
    Pause,
    Resume,
    SetBudget,
    SetPriority,
    SetSpace,
    SteeringMessage,
    Stop,
    TryTrial,
    post,
    read_messages,
)

Home = str | os.PathLike[str] | None


def run(
    config_path: str | os.PathLike[str],
    *,
    max_trials: int | None = None,
    home: Home = None,
    display: Display | None = None,
    settings: RunnerSettings | None = None,
    policy_factory: PolicyFactory | None = None,
) -> RunOutcome:
    """Run the campaign of a config file (continuing it if it ran before) until it ends."""
    campaign = load_campaign(Path(config_path))
    if max_trials is not None:
        campaign = with_max_trials(campaign, max_trials)
    return run_campaign(campaign, home=home, display=display, settings=settings, policy_factory=policy_factory)


def run_detached(config_path: str | os.PathLike[str], *, max_trials: int | None = None, home: Home = None) -> Detached:
    """`autoresearch run CONFIG --detach`: start the campaign's runner in the background and return
    once it holds the campaign (its name, pid and log file; see `autoresearch.runner.detach`)."""
    return start_detached(config_path, max_trials=max_trials, home=home)


def resume(
    name: str,
    *,
    home: Home = None,
    display: Display | None = None,
    settings: RunnerSettings | None = None,
    policy_factory: PolicyFactory | None = None,
) -> RunOutcome:
    """Continue campaign `name` with the config it last ran with (also a paused or stopped one).

    When a live runner holds it, post a `Resume` command to its inbox instead.
    """
    campaign = Ledger.load(name, home).campaign
    try:
        return run_campaign(campaign, home=home, start=Start.resume, display=display, settings=settings,
                            policy_factory=policy_factory)  # fmt: skip
    except RunnerBusy as busy:
        post(name, Resume(), author="resume", home=home)
        status = campaign_status(Ledger.load(name, home))
        reason = f"a live runner (pid {busy.pid}) runs {name!r}; it was asked to resume through the inbox"
        return RunOutcome(
            name=name, state=status.state, reason=reason, already_ended=True, live_runner_pid=busy.pid, status=status
        )


def status(name: str, *, home: Home = None) -> CampaignStatus:
    """Where campaign `name` stands (what `autoresearch status NAME --json` prints)."""
    return read_status(name, home)[1]


def wait_for_tracking(name: str, *, timeout_s: float | None = None, home: Home = None) -> int:
    """Wait until campaign `name`'s MLflow writes are all applied (a runner returns before that and
    leaves them to a detached writer), or until no writer is applying them, or `timeout_s` passed.
    Returns the writes still pending: 0 means MLflow has every run and metric of the campaign."""
    return wait_drained(CampaignPaths.of(name, home).tracking_outbox, timeout_s)


def campaign_max_trials(name: str, *, home: Home = None) -> int:
    """The budget.max_trials campaign `name` last ran with."""
    return read_status(name, home)[0].budget.max_trials


def campaigns(*, home: Home = None) -> list[CampaignOverview]:
    """Every campaign under $AUTORESEARCH_HOME/campaigns, by name."""
    return read_overviews(home)


def report(name: str, out: str | os.PathLike[str] | None = None, *, home: Home = None) -> Path:
    """Write campaign `name`'s Markdown report with plots; default folder: its campaign dir/report."""
    ledger = Ledger.load(name, home)
    folder = Path(out) if out is not None else CampaignPaths.of(name, home).report_dir
    return write_report(ledger, folder, home=home)


def with_max_trials(campaign: Campaign, max_trials: int) -> Campaign:
    """The campaign with budget.max_trials replaced."""
    if max_trials < 1:
        raise RunnerError(f"--max-trials must be at least 1, got {max_trials}")
    return campaign.model_copy(update={"budget": campaign.budget.model_copy(update={"max_trials": max_trials})})


__all__ = [
    "Approve",
    "Detached",
    "CampaignOverview",
    "CancelTrial",
    "Command",
    "Deny",
    "Note",
    "Pause",
    "Resume",
    "RunOutcome",
    "SetBudget",
    "SetPriority",
    "SetSpace",
    "SteeringMessage",
    "Stop",
    "TryTrial",
    "campaign_max_trials",
    "campaigns",
    "overview",
    "post",
    "read_messages",
    "report",
    "resume",
    "run",
    "run_detached",
    "status",
    "with_max_trials",
]
