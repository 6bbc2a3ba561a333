"""`RunContext`: the runner's composition root, built once per run by `run_campaign`.

It holds what one run works with (the campaign's paths, its ledger, the policy, compute, MLflow,
the inbox and approval book, the window, the display and the settings) and is the one owner of
the policy: a steering change goes through `retarget`, which rebuilds the policy with the run's
`policy_factory` and hands it to the parts that use it. The graph's nodes and the steering
handlers read everything from it (it is the `SteeringTarget` of `autoresearch.steering`).
Used from the runner's thread only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from autoresearch.campaign import Campaign, CampaignPaths, CampaignState, Ledger, PolicyKind, TrialRecord, campaign_status
from autoresearch.policy import Policy
from autoresearch.runner.display import Display, QuietDisplay
from autoresearch.runner.errors import RunnerError
from autoresearch.runner.evaluate import Evaluator
from autoresearch.runner.launch import Launcher
from autoresearch.runner.policies import PolicyFactory, build_policy
from autoresearch.steering import ApprovalBook, Inbox, Window, store_campaign
from compute import Client
from tracking import Tracker



@dataclass(frozen=True)
class RunnerSettings:
    """How often the runner looks at things."""

    poll_s: float = 1.0
    """Longest wait between two reads of running trials' metrics (job state changes wake it at once)."""
    heartbeat_s: float = 10.0
    """Longest time evaluate waits before a replan (which reads the inbox and the deadline)."""
    wait_for_tracking: bool = False
    """Return only once every MLflow write is applied. Default: the campaign ends when its ledger
    has every verdict, and the writes still pending are applied by a detached writer (`autoresearch
    status` shows `tracking: N writes pending` until it is done)."""


@dataclass
class RunContext:
    """One run of one campaign."""

    paths: CampaignPaths
    ledger: Ledger
    """The trial ledger; this runner is its single writer (it holds the campaign's lock)."""
    policy: Policy
    """The policy now in use (replaced only by `retarget`)."""
    kind: PolicyKind
    """The kind the policy resolved to."""
    policy_factory: PolicyFactory
    environ: Mapping[str, str] | None
    """Where `policy.kind: auto` looks for the provider's key (None: os.environ)."""
    client: Client
    tracker: Tracker
    """Where trials' runs are tracked (writes queued off the runner's path)."""
    launcher: Launcher
    evaluator: Evaluator
    inbox: Inbox
    book: ApprovalBook
    window: Window
    display: Display
    settings: RunnerSettings
    _shown_at: float = field(default=-math.inf, init=False)

    @property
    def campaign(self) -> Campaign:
        """The campaign as it stands now (the config with chat's changes laid over it)."""
        return self.ledger.campaign

    def event(self, text: str) -> None:
        self.display.event(text)

    def show(self, *, every_s: float = 0.0) -> None:
        """Refresh the display's status; `every_s`: not again within that many seconds (a round
        refreshes it; a whole status costs a summary per trial). A quiet display is not sent it."""
        if isinstance(self.display, QuietDisplay):
            return
        now = time.monotonic()
        if now - self._shown_at < every_s:
            return
        self._shown_at = now
        status = campaign_status(self.ledger, waiting=self.client.pending_reasons)  # pending jobs are not running
        self.display.update(status, self.campaign.budget.max_trials)

    def retarget(self, campaign: Campaign) -> None:
        """Go on with `campaign`: the ledger stores it and a policy is rebuilt on it."""
        store_campaign(self.ledger, campaign)
        self.policy, self.kind = build_policy(campaign, self.ledger, environ=self.environ, factory=self.policy_factory)
        self.evaluator.policy = self.policy

    def check_folder(self) -> None:
        """RunnerError when the campaign's folder (its ledger) vanished mid-run; the trials still
        running are cancelled first, since their checkpoint folders went with it."""
        if self.paths.ledger_db.is_file():
            return
        reason = f"the campaign folder {self.paths.root} vanished while the runner worked on it"
        for trial in self.ledger.trials():
            if not trial.state.final and trial.job_id:
                self.client.cancel(trial.job_id, reason)
        raise RunnerError(
            f"{reason} (deleted or moved): its trial ledger {self.paths.ledger_db.name} is gone, so the runner "
            f"stopped and cancelled its running trials. Put the folder back and run `autoresearch resume "
            f"{self.paths.name}`, or start over with `autoresearch run CONFIG`."
        )

    def cancel_trial(self, trial: TrialRecord, reason: str) -> None:
        self.evaluator.cancel_trial(trial, reason)

    def stop(self, reason: str) -> None:
        """Cancel every unfinished trial; the campaign ends as stopped with `reason`."""
        for trial in self.ledger.trials():
            if not trial.state.final:
                self.evaluator.cancel_trial(trial, reason)
        self.ledger.set_state(CampaignState.stopped, reason)
        self.ledger.append_note(f"campaign stopped: {reason}", author="runner")
        self.event(f"campaign {self.campaign.name} stopped: {reason}")
        self.show()
