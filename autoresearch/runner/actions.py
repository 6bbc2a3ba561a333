"""The steering kinds chat adds to the runner: budget, space, priority, try, cancel, and the
approve/deny answers to approval gates.

`SteeringActions` is bound to one runner (its ledger, policy, evaluator and compute client).
Its handlers run at replan like the built-in ones. A change of budget, space or priority is
validated again (the campaign may have moved since chat checked it), stored in
`steering.json` (see `overrides`), and handed to the runner: the ledger's campaign is
replaced and the policy is rebuilt on it, so the next proposals use the new space.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from autoresearch.campaign import Campaign, CampaignState, Ledger, LedgerError, Proposal, TrialState
from autoresearch.runner.approvals import ApprovalBook, ApprovalStatus, Gate
from autoresearch.runner.inbox import Inbox, SteeringKind, SteeringMessage
from autoresearch.runner.nodes import CampaignNodes
from autoresearch.runner.overrides import (
    SteeringError,
    change_budget,
    change_priority,
    change_space,
    effective_campaign,
    load_overrides,
    record,
    save_overrides,
)
from autoresearch.runner.policies import build_policy
from autoresearch.runner.steering import Handler, SteeringContext
from compute import ComputeError

NIGHTLY_PAUSE = "nightly window ended"
"""How a pause by the nightly window's end starts its reason (nightly resumes those)."""


class ActionKind(str, enum.Enum):
    """Inbox kinds chat posts besides pause, resume, stop and note."""

    budget = "budget"
    """payload {"changes": {"max_trials": 80, ...}}."""
    space = "space"
    """payload {"params": {"lr": [1e-4, 1e-2], "act": ["relu", "tanh"]}}."""
    priority = "priority"
    """payload {"priority": 75 or "high"}."""
    try_ = "try"
    """payload {"params": {...}}: this trial goes in the ledger next."""
    cancel = "cancel"
    """payload {"trial": N}: cancel that trial (and its job)."""
    approve = "approve"
    """payload {"request": ID, "reason": "..."}: yes to an approval request."""
    deny = "deny"
    """payload {"request": ID, "reason": "..."}: no to an approval request."""
    window_end = "window_end"
    """Posted by `autoresearch nightly` at the end of its window, to wake the runner; payload
    {"at": ISO datetime} ends the window early (nightly got SIGTERM or Ctrl-C)."""


def restore_steering(ledger: Ledger, folder: Path) -> None:
    """At runner start: lay the stored chat changes over the config, then apply budget and space
    messages posted while no runner ran (so a raised budget lets an ended campaign go on).
    Priority changes wait for the first replan (they may need approval). Raises `RunnerError`."""
    from autoresearch.runner.run import RunnerError

    try:
        overrides = load_overrides(folder)
        if overrides.search_space or overrides.budget or overrides.priority is not None:
            store_campaign(ledger, effective_campaign(ledger.campaign, overrides))
    except SteeringError as exc:
        raise RunnerError(f"campaign {ledger.campaign.name!r}: the chat changes no longer fit its config: {exc}. "
                          f"Delete {folder / 'steering.json'} to drop them.") from None  # fmt: skip
    inbox = Inbox(folder)
    try:
        for message in inbox.messages(pending_only=True):
            if message.kind in (ActionKind.budget.value, ActionKind.space.value):
                try:
                    _, lines = apply_config_change(ledger, folder, message)
                    outcome = "; ".join(lines) or "no change"
                except SteeringError as exc:
                    outcome = f"rejected: {exc}"
                inbox.mark_handled(message.id, outcome)
    finally:
        inbox.close()


def store_campaign(ledger: Ledger, campaign: Campaign) -> None:
    ledger.set_campaign(campaign)


def apply_config_change(ledger: Ledger, folder: Path, message: SteeringMessage) -> tuple[Campaign, list[str]]:
    """Validate a budget/space/priority message against the ledger's campaign; store the result.
    Raises `SteeringError`."""
    before = ledger.campaign
    payload = message.payload
    if message.kind == ActionKind.budget.value:
        after, lines = change_budget(before, dict(payload.get("changes") or {}))
    elif message.kind == ActionKind.space.value:
        after, lines = change_space(before, dict(payload.get("params") or {}))
    else:
        after, lines = change_priority(before, payload.get("priority", ""))
    save_overrides(folder, record(load_overrides(folder), before, after))
    store_campaign(ledger, after)
    return after, lines


class SteeringActions:
    """Chat's steering kinds for one runner."""

    def __init__(self, nodes: CampaignNodes, folder: Path, environ: Mapping[str, str] | None = None) -> None:
        self.nodes = nodes
        self.ledger = nodes.ledger
        self.folder = folder
        self.environ = environ
        self.book = ApprovalBook(folder)
        self.window_cut: datetime | None = None
        """An earlier end of the nightly window, from a `window_end` message with "at"."""

    def handlers(self) -> dict[str, Handler]:
        return {
            ActionKind.budget.value: self._config,
            ActionKind.space.value: self._config,
            ActionKind.priority.value: self._priority,
            ActionKind.try_.value: self._try,
            ActionKind.cancel.value: self._cancel,
            ActionKind.window_end.value: lambda ctx, message: self.cut_window(message),
        }

    # --- handing the runner a changed campaign --------------------------------------------

    def retarget(self, campaign: Campaign) -> None:
        """The runner goes on with `campaign`: ledger, nodes and a policy rebuilt on it."""
        store_campaign(self.ledger, campaign)
        self.nodes.campaign = campaign
        policy, _ = build_policy(campaign, self.ledger, environ=self.environ)
        self.nodes.policy = policy
        self.nodes.evaluator.policy = policy

    def _config(self, ctx: SteeringContext, message: SteeringMessage) -> str:
        try:
            after, lines = apply_config_change(self.ledger, self.folder, message)
        except SteeringError as exc:
            return f"rejected: {exc}"
        self.retarget(after)
        return "; ".join(lines) or "no change"

    def _priority(self, ctx: SteeringContext, message: SteeringMessage) -> str:
        try:
            after, lines = change_priority(self.ledger.campaign, message.payload.get("priority", ""))
        except SteeringError as exc:
            return f"rejected: {exc}"
        before = self.ledger.campaign.compute.priority
        if self.ledger.campaign.approvals.priority_raise and after.compute.priority > before:
            summary = f"raise compute.priority {before} -> {after.compute.priority} (asked by {message.author})"
            details = {"message": message.id, "from": before, "to": after.compute.priority}
            request = self.book.ask(Gate.priority_raise, f"priority:message-{message.id}", summary, details)
            return f"waiting for approval #{request.id}: {request.summary}"
        return self.apply_priority(message)

    def apply_priority(self, message: SteeringMessage) -> str:
        """Set the priority of future jobs and of the campaign's pending and running ones."""
        try:
            after, lines = apply_config_change(self.ledger, self.folder, message)
        except SteeringError as exc:
            return f"rejected: {exc}"
        self.retarget(after)
        moved = 0
        for trial in self.ledger.trials():
            if trial.job_id and not trial.state.final:
                try:
                    job = self.nodes.client.get(trial.job_id)
                    if not job.state.final:
                        self.nodes.client.set_priority(job.id, after.compute.priority)
                        moved += 1
                except ComputeError:
                    continue
        return "; ".join([*lines, f"{moved} pending/running job(s) re-prioritised"]) if lines else "no change"

    def _try(self, ctx: SteeringContext, message: SteeringMessage) -> str:
        params = dict(message.payload.get("params") or {})
        rationale = str(message.payload.get("rationale") or f"requested by {message.author} in chat")
        try:
            admitted = self.ledger.admit(Proposal(params=params, rationale=rationale))
        except ValueError as exc:
            return f"rejected: {exc}"
        return f"trial {admitted.trial_number} queued: {_params(admitted.params)}"

    def _cancel(self, ctx: SteeringContext, message: SteeringMessage) -> str:
        number = message.payload.get("trial")
        try:
            trial = self.ledger.trial(int(number))  # type: ignore[arg-type]
        except (TypeError, ValueError, LedgerError) as exc:
            return f"rejected: {exc}"
        if trial.state.final:
            return f"ignored: trial {trial.number} is already {trial.state.value}"
        self.nodes.evaluator.cancel_trial(trial, f"cancelled by {message.author} in chat")
        job = f" (job {trial.job_id} cancelled)" if trial.job_id else ""
        return f"trial {trial.number}: {trial.state.value} -> cancelled{job}"

    # --- the nightly window -----------------------------------------------------------------

    def window_end(self, until: datetime | None) -> datetime | None:
        """The window's end: `until`, or the earlier end nightly posted (SIGTERM)."""
        ends = [end for end in (until, self.window_cut) if end is not None]
        return min(ends) if ends else None

    def cut_window(self, message: SteeringMessage) -> str:
        """A `window_end` message: with "at", the window ends then (if earlier)."""
        at = message.payload.get("at")
        if not at:
            return "the nightly window ended"
        try:
            cut = datetime.fromisoformat(str(at))
        except ValueError:
            return f'rejected: "at" must be an ISO datetime, not {at!r}'
        if cut.tzinfo is None:
            cut = cut.astimezone()
        self.window_cut = cut if self.window_cut is None else min(self.window_cut, cut)
        return f"the nightly window ends early, at {cut:%H:%M:%S}"

    def wind_down(self, until: datetime) -> int:
        """At the window's end: pause the campaign, stop running trials (SIGTERM: they save a
        checkpoint) without a verdict, and queue each again for the next night as a trial that
        resumes it (`resume_of`: same parameters and seed, from its checkpoint). Idempotent."""
        reason = f"{NIGHTLY_PAUSE} at {until:%H:%M}; `autoresearch nightly` (or `autoresearch resume`) continues it"
        if self.ledger.state is CampaignState.running:
            self.ledger.set_state(CampaignState.paused, reason)
        queued = {t.resume_of for t in self.ledger.trials() if t.state is TrialState.proposed}
        stopped = 0
        for trial in self.ledger.running():
            again = f"nightly re-run of trial {trial.number} (stopped when the window ended), from its checkpoint"
            if trial.number not in queued:
                self.ledger.admit(Proposal(params=trial.params, patch=trial.patch, parent_trial=trial.parent_trial,
                                           resume_of=trial.number, rationale=again,
                                           hypothesis=trial.hypothesis))  # fmt: skip
            self.nodes.evaluator.cancel_trial(trial, f"{NIGHTLY_PAUSE}: re-run queued for the next night")
            stopped += 1
        if stopped:
            self.ledger.append_note(f"{NIGHTLY_PAUSE}: {stopped} running trial(s) stopped and queued again", "runner")
        return stopped

    # --- waiting for approval answers ------------------------------------------------------

    def wait_for_answer(
        self, until: datetime | None, on_give_up: Callable[[], None], poll_s: float = 0.3
    ) -> dict[str, Any] | None:
        """Block until `/approve` or `/deny` answers an open request (or `/stop` denies them all).

        Returns the resume value; None when `until` passed first (`on_give_up` ran).
        """
        inbox = self.nodes.inbox
        shown: set[int] = set()
        while True:
            open_requests = {r.id: r for r in self.book.open_requests()}
            for r in open_requests.values():
                if r.id not in shown:
                    shown.add(r.id)
                    chat = f"autoresearch chat {self.ledger.campaign.name}"
                    self.nodes.display.event(
                        f"waiting for approval #{r.id}: {r.summary} (`/approve {r.id}` or `/deny {r.id}` in `{chat}`)"
                    )
            if not open_requests:
                return {"request": None, "approved": False}
            for message in inbox.messages(pending_only=True):
                if message.kind == SteeringKind.stop.value:
                    for r in open_requests.values():
                        self.book.answer(r.id, False, message.author, "the campaign was stopped")
                    return {"request": None, "approved": False}
                if message.kind in (ActionKind.approve.value, ActionKind.deny.value):
                    answer = self._answer(message, open_requests)
                    if answer is not None:
                        return answer
                if message.kind == ActionKind.window_end.value:
                    inbox.mark_handled(message.id, self.cut_window(message))
            end = self.window_end(until)
            if end is not None and datetime.now().astimezone() >= end:
                on_give_up()
                return None
            time.sleep(poll_s)

    def _answer(self, message: SteeringMessage, open_requests: dict[int, Any]) -> dict[str, Any] | None:
        wanted = message.payload.get("request")
        request = open_requests.get(int(wanted)) if wanted is not None else next(iter(open_requests.values()))
        if request is None:
            self.nodes.inbox.mark_handled(message.id, f"ignored: request {wanted} is not waiting")
            return None
        approved = message.kind == ActionKind.approve.value
        answered = self.book.answer(request.id, approved, message.author, str(message.payload.get("reason") or ""))
        verdict = "approved" if answered.status is ApprovalStatus.approved else "denied"
        self.nodes.inbox.mark_handled(message.id, f"request #{request.id} {verdict}: {request.summary}")
        self.nodes.display.event(f"approval #{request.id} {verdict} by {message.author}")
        return {"request": request.id, "approved": approved, "by": message.author}


def _params(params: Mapping[str, object]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())

