"""Applying steering commands to a running campaign (a `SteeringTarget`).

The runner drains its inbox at each replan: every pending command with a handler here is
applied, then its message is marked handled with the handler's outcome, so a runner killed in
between applies it again on resume (each handler is idempotent or harmless twice). `Approve`
and `Deny` have no handler: they wait for the runner's approval loop (`wait_for_answer`).

A change of budget, space or priority is validated again (the campaign may have moved since
chat checked it), stored in `steering.json` (see `overrides`) and handed to the runner with
`retarget`, so the next proposals use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import BaseModel

from autoresearch.campaign import Campaign, CampaignPaths, CampaignState, Ledger, LedgerError, Proposal
from autoresearch.steering.approvals import Gate
from autoresearch.steering.commands import (
    CancelTrial,
    Note,
    Pause,
    Resume,
    SetBudget,
    SetPriority,
    SetSpace,
    Stop,
    TryTrial,
    WindowEnd,
)
from autoresearch.steering.inbox import Inbox, SteeringMessage
from autoresearch.steering.overrides import (
    SteeringError,
    change_budget,
    change_priority,
    change_space,
    effective_campaign,
    load_overrides,
    record,
    save_overrides,
)
from autoresearch.steering.target import SteeringTarget
from compute import ComputeError

Handler = Callable[[SteeringTarget, SteeringMessage], str]
"""Applies one message's command; returns what it did (the message's outcome)."""


def _pause(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, Pause)
    ledger = target.ledger
    if ledger.state is not CampaignState.running:
        return f"ignored: the campaign is {ledger.state.value}"
    ledger.set_state(CampaignState.paused, message.command.reason or f"paused by {message.author}")
    return "paused: running trials finish, no new ones start"


def _resume(target: SteeringTarget, message: SteeringMessage) -> str:
    if target.ledger.state is not CampaignState.paused:
        return f"ignored: the campaign is {target.ledger.state.value}"
    target.ledger.set_state(CampaignState.running, f"resumed by {message.author}")
    return "resumed"


def _stop(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, Stop)
    if target.ledger.state.value in ("completed", "stopped", "failed"):
        return f"ignored: the campaign is already {target.ledger.state.value}"
    target.stop(message.command.reason or f"stopped by {message.author}")
    return "stopped: running trials cancelled"


def _note(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, Note)
    target.ledger.append_note(message.command.text, author=message.author)
    return "noted in the research log and passed to the policy"


def _config(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, SetBudget | SetSpace)
    try:
        after, lines = apply_config_change(target.ledger, target.paths, message.command)
    except SteeringError as exc:
        return f"rejected: {exc}"
    target.retarget(after)
    return "; ".join(lines) or "no change"


def _priority(target: SteeringTarget, message: SteeringMessage) -> str:
    command = message.command
    assert isinstance(command, SetPriority)
    campaign = target.ledger.campaign
    try:
        after, _ = change_priority(campaign, command.priority)
    except SteeringError as exc:
        return f"rejected: {exc}"
    before = campaign.compute.priority
    if campaign.approvals.priority_raise and after.compute.priority > before:
        summary = f"raise compute.priority {before} -> {after.compute.priority} (asked by {message.author})"
        details = {"message": message.id, "from": before, "to": after.compute.priority}
        request = target.book.ask(Gate.priority_raise, f"priority:message-{message.id}", summary, details)
        return f"waiting for approval #{request.id}: {request.summary}"
    return apply_priority(target, command)


def apply_priority(target: SteeringTarget, command: SetPriority) -> str:
    """Set the priority of future jobs and of the campaign's pending and running ones."""
    try:
        after, lines = apply_config_change(target.ledger, target.paths, command)
    except SteeringError as exc:
        return f"rejected: {exc}"
    target.retarget(after)
    moved = 0
    for trial in target.ledger.trials():
        if trial.job_id and not trial.state.final:
            try:
                job = target.client.get(trial.job_id)
                if not job.state.final:
                    target.client.set_priority(job.id, after.compute.priority)
                    moved += 1
            except ComputeError:
                continue
    return "; ".join([*lines, f"{moved} pending/running job(s) re-prioritised"]) if lines else "no change"


def _try(target: SteeringTarget, message: SteeringMessage) -> str:
    command = message.command
    assert isinstance(command, TryTrial)
    rationale = command.rationale or f"requested by {message.author} in chat"
    try:
        admitted = target.ledger.admit(Proposal(params=dict(command.params), rationale=rationale))
    except ValueError as exc:
        return f"rejected: {exc}"
    return f"trial {admitted.trial_number} queued: {_params(admitted.params)}"


def _cancel(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, CancelTrial)
    try:
        trial = target.ledger.trial(message.command.trial)
    except LedgerError as exc:
        return f"rejected: {exc}"
    if trial.state.final:
        return f"ignored: trial {trial.number} is already {trial.state.value}"
    target.cancel_trial(trial, f"cancelled by {message.author} in chat")
    job = f" (job {trial.job_id} cancelled)" if trial.job_id else ""
    return f"trial {trial.number}: {trial.state.value} -> cancelled{job}"


def _window_end(target: SteeringTarget, message: SteeringMessage) -> str:
    assert isinstance(message.command, WindowEnd)
    return target.window.apply(message.command)


HANDLERS: Mapping[type[BaseModel], Handler] = {
    Pause: _pause, Resume: _resume, Stop: _stop, Note: _note, SetBudget: _config, SetSpace: _config,
    SetPriority: _priority, TryTrial: _try, CancelTrial: _cancel, WindowEnd: _window_end,
}  # fmt: skip
"""Command class -> its replan handler."""

HANDLED_KINDS = frozenset(cls.model_fields["kind"].default for cls in HANDLERS)
"""The kinds a replan applies (a pending one of these wakes the runner)."""


def drain(inbox: Inbox, target: SteeringTarget) -> list[SteeringMessage]:
    """Apply every pending command that has a handler, oldest first; return the messages applied."""
    applied = []
    for message in inbox.messages(pending_only=True):
        handler = HANDLERS.get(type(message.command)) if message.command is not None else None
        if handler is None:
            continue  # approve/deny wait for the approval loop; an unreadable old row is left alone
        inbox.mark_handled(message.id, handler(target, message))
        applied.append(inbox.get(message.id))
    return applied


def notes_of(messages: list[SteeringMessage]) -> list[str]:
    """The texts of the notes among `messages` (steering for the policy's next proposal)."""
    return [m.command.text for m in messages if isinstance(m.command, Note)]


# --- config changes -------------------------------------------------------------------------


def store_campaign(ledger: Ledger, campaign: Campaign) -> None:
    ledger.set_campaign(campaign)


def apply_config_change(
    ledger: Ledger, paths: CampaignPaths, command: SetBudget | SetSpace | SetPriority
) -> tuple[Campaign, list[str]]:
    """Validate a budget/space/priority command against the ledger's campaign; store the result.
    Raises `SteeringError`."""
    before = ledger.campaign
    if isinstance(command, SetBudget):
        after, lines = change_budget(before, dict(command.changes))
    elif isinstance(command, SetSpace):
        after, lines = change_space(before, dict(command.params))
    else:
        after, lines = change_priority(before, command.priority)
    save_overrides(paths, record(load_overrides(paths), before, after))
    store_campaign(ledger, after)
    return after, lines


def restore_steering(ledger: Ledger, paths: CampaignPaths) -> None:
    """At runner start: lay the stored chat changes over the config, then apply budget and space
    commands posted while no runner ran (so a raised budget lets an ended campaign go on).
    Priority changes wait for the first replan (they may need approval). Raises `SteeringError`
    when the stored changes no longer fit the config."""
    overrides = load_overrides(paths)  # its own error names the file and what to do
    try:
        if overrides.search_space or overrides.budget or overrides.priority is not None:
            store_campaign(ledger, effective_campaign(ledger.campaign, overrides))
    except SteeringError as exc:
        raise SteeringError(f"campaign {ledger.campaign.name!r}: the chat changes no longer fit its config: {exc}. "
                            f"Delete {paths.overrides} to drop them.") from None  # fmt: skip
    inbox = Inbox(paths)
    try:
        for message in inbox.messages(pending_only=True):
            if isinstance(message.command, SetBudget | SetSpace):
                try:
                    _, lines = apply_config_change(ledger, paths, message.command)
                    outcome = "; ".join(lines) or "no change"
                except SteeringError as exc:
                    outcome = f"rejected: {exc}"
                inbox.mark_handled(message.id, outcome)
    finally:
        inbox.close()


def _params(params: Mapping[str, object]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())

