"""The four nodes of the campaign graph, reading one run's `RunContext` (ledger, policy, compute)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, UTC

from autoresearch.campaign import (
    Campaign,
    CampaignState,
    Ledger,
    CampaignStopReason,
    TrialFailure,
    TrialRecord,
    TrialState,
    budget_used,
    confirmations_due,
    confirmed_early,
    exploration_room,
    first_line,
    free_slots,
    fruitless,
    repeated_failure,
    stop_reason,
    winner_text,
)
from autoresearch.campaign.ranking import declared_ranking, suspect_reruns_due
from autoresearch.campaign.records import Proposal
from autoresearch.campaign.suspects import suspect_reasons
from autoresearch.llm import LLMUnavailable
from autoresearch.policy import PolicyContext, PolicyPause, ReplanAction
from autoresearch.runner.confirm_tags import tag_origin, tag_winner
from autoresearch.runner.context import RunContext
from autoresearch.runner.crash import crash_point
from autoresearch.runner.evaluate import DISK_FULL_CANCEL
from autoresearch.runner.graph import RunnerState
from autoresearch.runner.holdout import HoldoutJobs
from autoresearch.steering import HANDLED_KINDS, drain, notes_of
from autoresearch.workspace import PatchError
from compute import Job
from compute.health.rules import DISK_FULL_RULE
from tracking import QueuedTracker

_LOOK_EVERY_S = 0.005
"""Where the compute client cannot make a wake-up socket (compute/watchers.py), the longest pause
between two looks at the compute store while jobs run (a look costs ~100 us of CPU: 4% of a core
at this rate). With one, a job's end wakes the runner at once and it looks rarely."""
_SHOW_EVERY_S = 0.25
"""Most often a round refreshes the display's status (a live view redraws 4 times a second)."""
_CANCEL_ON = (CampaignStopReason.deadline, CampaignStopReason.target_reached)
"""Limits that cancel running trials; the others let them finish."""


class CampaignNodes:
    """propose, launch, evaluate and replan for one campaign (used from one thread)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.ledger = ctx.ledger
        self.client = ctx.client
        self.display = ctx.display
        self.settings = ctx.settings
        self.started = datetime.now(UTC)
        """Failures before this runner started do not count towards failing fast (a resume starts over)."""
        self.writes = ctx.tracker if isinstance(ctx.tracker, QueuedTracker) else None
        """Queued MLflow writes, held from a job's end until the next job is submitted (see `evaluate`)."""
        self.holdout = HoldoutJobs(ctx.ledger, ctx.client, ctx.tracker, ctx.launcher.workspaces, ctx.display.event)
        """The hidden holdout's jobs (`objective.holdout`): run for the leaders before the campaign completes."""
        self._job_states: dict[str, str] = {}
        """Job id -> state as `evaluate` last saw it, kept across rounds: a round's first look reads
        only the jobs launched since (a job that changed meanwhile differs from it, so the wait
        returns it at once)."""

    @property
    def campaign(self) -> Campaign:
        return self.ctx.campaign

    # --- nodes ------------------------------------------------------------------------

    def propose(self, state: RunnerState) -> RunnerState:
        """Fill the idle parallel slots with new trials (none while paused or at a limit)."""
        if self.ledger.state is not CampaignState.running:
            return {}
        view = self._look(state.get("steering", []))
        n = free_slots(self.campaign, view.trials)
        if n <= 0 or self._limit(view) is not None:
            return {}
        room = exploration_room(self.campaign, view.trials)
        confirmations = confirmations_due(self.campaign, view.trials, n)
        for proposal in confirmations:  # the leaders' re-runs take precedence over new exploration
            admitted = self.ledger.admit(proposal)
            self.display.event(f"trial {admitted.trial_number} proposed: confirmation of trial {proposal.confirms}")
            crash_point("propose.confirmed")
        n = min(n - len(confirmations), room)
        if n <= 0:
            return {"steering": []} if confirmations else {}
        if confirmations:
            view = self._look(state.get("steering", []))
        try:
            proposals = self.ctx.policy.propose(view, n)
        except LLMUnavailable as exc:
            self._pause_for(exc)
            return {}
        except PolicyPause as exc:  # policy.fallback: pause
            self._pause(f"paused: {exc}")
            return {}
        crash_point("propose.asked")
        for proposal in proposals:
            admitted = self.ledger.admit(proposal)
            self.display.event(f"trial {admitted.trial_number} proposed: {_params(admitted.params)}")
        return {"steering": []}

    def launch(self, state: RunnerState) -> RunnerState:
        """Give every proposed trial a run and a job (again after a crash: same run, same job), then
        show them running: the display's last refresh (replan's) came before they were proposed, and
        the next waits for a trial to end."""
        try:
            if self.ledger.state is not CampaignState.running:
                return {}
            unlaunched = self.ledger.unlaunched()
            for trial in unlaunched:
                try:
                    job = self.ctx.launcher.launch(trial)
                except PatchError as exc:
                    self.ledger.fail(trial.number, TrialFailure.bad_patch, log_excerpt=str(exc))
                    self.display.event(f"trial {trial.number} failed: its patch does not apply: {exc}")
                    continue
                self.display.event(f"trial {trial.number} launched as {job.id}")
                if not job.state.final:  # as submitted: `evaluate` need not read it back
                    self._job_states[job.id] = job.state.value
            if unlaunched:
                self.ctx.show()
            return {}
        finally:
            self._release_writes()

    def evaluate(self, state: RunnerState) -> RunnerState:
        """Watch running trials until one ends, a message arrives, or the heartbeat passes.

        Queued MLflow writes are held while the jobs are looked at; when a trial ended they stay
        held through replan and propose until `launch` has submitted the next job, so a slot is
        refilled first and MLflow is written while the runner waits for jobs."""
        if self.ledger.state is CampaignState.running and self.ledger.unlaunched():
            return {}  # proposed trials wait for their launch (a rerun round, an answered gate): launch first
        deadline = time.monotonic() + self.settings.heartbeat_s
        known = set(HANDLED_KINDS)
        seen: dict[str, str] | None = self._job_states or None
        changed: list[Job] = []
        while True:
            running = self.ledger.running()
            if not running:
                if self.ledger.state is CampaignState.running:
                    return {}  # free slots: propose fills them, or replan ends the campaign
                if self.ctx.inbox.pending_count(known) or time.monotonic() >= deadline:
                    return {}
                time.sleep(min(self.settings.poll_s, max(0.0, deadline - time.monotonic())))
                continue
            if self.writes is not None:
                self.writes.hold()
            ended, seen = self.ctx.evaluator.check(running, seen, changed)
            self._job_states = seen
            trials = self.ledger.trials() if any(t.confirms is not None for t in ended) else []
            for trial in ended:
                self.display.event(_verdict(trial, self.campaign.objective.metric))
                tag_origin(self.ctx.tracker, self.campaign, trials, trial)
                self.holdout.after_trial(trial)
                if (trial.state is TrialState.cancelled and trial.failure_rule == DISK_FULL_RULE
                        and self.ledger.state is CampaignState.running):
                    self._pause_disk_full(trial)
            if ended:
                return {}
            self._release_writes()
            if self.ctx.inbox.pending_count(known) or time.monotonic() >= deadline:
                return {}
            changed = self.client.wait_for_change(list(seen), since=seen, timeout=self.settings.poll_s,
                                                  poll_s=_LOOK_EVERY_S, ignore_starts=True)  # fmt: skip

    def replan(self, state: RunnerState) -> RunnerState:
        """Apply steering, let the policy replan on new results, and end the campaign at a limit."""
        crash_point("replan.start")
        self.holdout.collect()
        applied = drain(self.ctx.inbox, self.ctx)
        for message in applied:
            self.display.event(f"inbox #{message.id} {message.kind} from {message.author}: {message.outcome}")
        update: RunnerState = {"round": state.get("round", 0) + 1,
                               "steering": [*state.get("steering", []), *notes_of(applied)]}  # fmt: skip
        if self.ledger.state is CampaignState.stopped:
            return {**update, "ended": CampaignState.stopped.value}
        view = self._look(update["steering"])
        finals = sum(t.state.final for t in view.trials)
        if self.ledger.state is CampaignState.running and finals > state.get("finished_seen", 0):
            try:
                decision = self.ctx.policy.replan(view)
            except LLMUnavailable as exc:
                self._pause_for(exc)
            else:
                update["finished_seen"] = finals
                if decision.notes:
                    self.ledger.append_note(decision.notes, author="policy")
                if decision.action is ReplanAction.stop:
                    self.ctx.stop(f"the policy stopped the campaign: {decision.reason or 'no reason given'}")
                    return {**update, "ended": CampaignState.stopped.value}
        broken = repeated_failure(self.campaign, view.trials, self.started)
        if broken is not None and self.ledger.state is CampaignState.running:
            self._fail(broken)
            return {**update, "ended": CampaignState.failed.value}
        if self.ledger.state is CampaignState.running:
            self._rerun_suspects(view.trials)
        limit = self._limit(view)
        ended = None if limit is None else self._wind_down(limit)
        if ended is not None:
            return {**update, "ended": ended.value}
        self.ctx.show(every_s=_SHOW_EVERY_S)
        return update

    # --- helpers ----------------------------------------------------------------------

    def _release_writes(self) -> None:
        if self.writes is not None:
            self.writes.release()

    def _look(self, steering: list[str]) -> PolicyContext:
        """The policy's context (with the budget used), from one read of the ledger's trials.

        Built every round, so without a whole `CampaignStatus` (a summary per trial, the outbox's
        pending count) and without validating again what is typed already: pydantic runs a
        model's after-validators even on an instance (the campaign's cross checks, 5 ms)."""
        trials = self.ledger.trials()
        used = budget_used(self.ledger.facts(), trials, datetime.now(UTC), live=True)  # this runner holds the lock
        return PolicyContext.model_construct(campaign=self.campaign, trials=trials, notes=self.ledger.notes(),
                                             steering=steering, budget_used=used)  # fmt: skip

    def _limit(self, view: PolicyContext) -> CampaignStopReason | None:
        ranking = declared_ranking(view.trials, self.campaign)
        assert view.budget_used is not None
        limit = stop_reason(self.campaign, view.budget_used, ranking[0].mean if ranking else None, self.ledger.started_at)
        if limit is None and confirmed_early(self.campaign, view.trials):
            return CampaignStopReason.confirmed
        return limit

    def _rerun_suspects(self, trials: list[TrialRecord]) -> None:
        """Admit a re-run, on other nodes, of each suspect trial that would be the best (once per
        trial: the ledger's `suspect_rerun_of` remembers it across a crash)."""
        due = suspect_reruns_due(trials, self.campaign)
        reasons = suspect_reasons(trials, self.campaign.validity.min_speed_ratio) if due else {}
        for trial in due:
            why = f"re-run of suspect trial {trial.number} on another node: {reasons[trial.number]}"
            admitted = self.ledger.admit(Proposal(params=trial.params, patch=trial.patch, parent_trial=trial.parent_trial,
                                                  suspect_rerun_of=trial.number, rationale=why,
                                                  hypothesis=trial.hypothesis))  # fmt: skip
            self.display.event(f"trial {admitted.trial_number} proposed: {why}")

    def _wind_down(self, limit: CampaignStopReason) -> CampaignState | None:
        """At a limit: cancel what the limit cancels; once nothing is active, complete the campaign
        (fail it when every trial failed) and return its final state."""
        active = [t for t in self.ledger.trials() if not t.state.final]
        if limit in _CANCEL_ON and active:
            for trial in active:
                self.ctx.evaluator.cancel_trial(trial, f"campaign reached {limit.value}")
            active = [t for t in self.ledger.trials() if not t.state.final]
        if active:
            return None
        self.holdout.finish()
        reason = _limit_text(limit, self.ledger)
        broken = fruitless(self.campaign, self.ledger.trials(), reason)
        if broken is not None:
            self._fail(broken)
            return CampaignState.failed
        tag_winner(self.ctx.tracker, self.campaign, self.ledger.trials())
        self.ledger.set_state(CampaignState.completed, reason)
        self.ledger.append_note(f"campaign completed: {reason}", author="runner")
        self.display.event(f"campaign {self.campaign.name} completed: {reason}")
        self._show()
        return CampaignState.completed

    def _fail(self, reason: str) -> None:
        """The setup is broken: cancel what runs, and end the campaign as failed."""
        for trial in self.ledger.trials():
            if not trial.state.final:
                self.ctx.cancel_trial(trial, "the campaign failed fast: its setup is broken")
        self.ledger.set_state(CampaignState.failed, reason)
        self.ledger.append_note(f"campaign failed: {reason}", author="runner")
        self.display.event(f"campaign {self.campaign.name} failed: {reason}")
        self._show()

    def _pause_for(self, exc: LLMUnavailable) -> None:
        hint = f" (the server suggested retrying after {exc.retry_after_s:.0f} s)" if exc.retry_after_s else ""
        reason = (
            f"paused: the LLM provider is unavailable after {exc.attempts} attempts{hint}: {exc}. "
            f"Running trials finish; `autoresearch resume {self.campaign.name}` continues."
        )
        self._pause(reason)

    def _pause_disk_full(self, trial: TrialRecord) -> None:
        error = first_line((trial.log_excerpt or "").removeprefix(f"{DISK_FULL_CANCEL}: "))
        self._pause(f"paused: trial {trial.number} {DISK_FULL_CANCEL}: {error}. Free space (`df -h`), then "
                    f"`autoresearch resume {self.campaign.name}` continues; running trials finish")

    def _pause(self, reason: str) -> None:
        self.ledger.set_state(CampaignState.paused, reason)
        self.ledger.append_note(reason, author="runner")
        self.display.event(reason)

    def _show(self) -> None:
        self.ctx.show()


def _limit_text(limit: CampaignStopReason, ledger: Ledger) -> str:
    best = ledger.best()
    objective = ledger.campaign.objective
    if limit is CampaignStopReason.target_reached and best is not None:
        return f"target reached: trial {best.number} {objective.metric} {best.value:.6g} (target {objective.target})"
    texts = {
        CampaignStopReason.max_trials: f"budget.max_trials ({ledger.campaign.budget.max_trials}) reached",
        CampaignStopReason.max_gpu_hours: f"budget.max_gpu_hours ({ledger.campaign.budget.max_gpu_hours}) reached",
        CampaignStopReason.max_llm_usd: f"budget.max_llm_usd ({ledger.campaign.budget.max_llm_usd}) reached",
        CampaignStopReason.deadline: "budget.deadline passed",
        CampaignStopReason.target_reached: "target reached",
        CampaignStopReason.confirmed: (
            f"the leaders are confirmed; the last {confirmed_early(ledger.campaign, ledger.trials())} trial(s) of "
            f"budget.max_trials ({ledger.campaign.budget.max_trials}) were kept to confirm a new leader, and none came"
        ),
    }
    text = texts[limit]
    if best is not None:
        text += f"; best {winner_text(declared_ranking(ledger.trials(), ledger.campaign), objective)}"
    return text


def _params(params: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


def _verdict(trial: TrialRecord, metric: str) -> str:
    if trial.state is TrialState.complete:
        return f"trial {trial.number} complete: {metric} {trial.value:.6g}"
    if trial.state is TrialState.pruned:
        return f"trial {trial.number} pruned at step {max(trial.intermediate_values, default=0)}"
    if trial.state is TrialState.failed:
        failure = trial.failure_class.value if trial.failure_class else "?"
        return f"trial {trial.number} failed ({failure}): {first_line(trial.log_excerpt)[:300]}"
    return f"trial {trial.number} {trial.state.value}: {trial.log_excerpt or ''}"
