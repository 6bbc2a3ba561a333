"""Applying inbox messages at replan: pause, resume, stop and note; other kinds wait.

A handler gets a `SteeringContext` and the message and returns what it did (recorded as the
message's outcome). Handlers are applied, then the message is marked handled, so a runner
killed in between applies it again on resume (pause, resume and stop are idempotent).
Later features add kinds by passing their own handlers to the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from autoresearch.campaign import CampaignState, Ledger
from autoresearch.runner.inbox import Inbox, SteeringKind, SteeringMessage


@dataclass
class SteeringContext:
    """What a handler may act on."""

    ledger: Ledger
    stop: Callable[[str], None]
    """Stop the campaign: cancel running trials' jobs, state stopped, with this reason."""
    notes: list[str] = field(default_factory=list)
    """Steering for the policy's next proposal (notes collected this drain)."""


Handler = Callable[[SteeringContext, SteeringMessage], str]


def _pause(ctx: SteeringContext, message: SteeringMessage) -> str:
    if ctx.ledger.state is not CampaignState.running:
        return f"ignored: the campaign is {ctx.ledger.state.value}"
    reason = str(message.payload.get("reason") or f"paused by {message.author}")
    ctx.ledger.set_state(CampaignState.paused, reason)
    return "paused: running trials finish, no new ones start"


def _resume(ctx: SteeringContext, message: SteeringMessage) -> str:
    if ctx.ledger.state is not CampaignState.paused:
        return f"ignored: the campaign is {ctx.ledger.state.value}"
    ctx.ledger.set_state(CampaignState.running, f"resumed by {message.author}")
    return "resumed"


def _stop(ctx: SteeringContext, message: SteeringMessage) -> str:
    if ctx.ledger.state.value in ("completed", "stopped", "failed"):
        return f"ignored: the campaign is already {ctx.ledger.state.value}"
    ctx.stop(str(message.payload.get("reason") or f"stopped by {message.author}"))
    return "stopped: running trials cancelled"


def _note(ctx: SteeringContext, message: SteeringMessage) -> str:
    text = str(message.payload.get("text", "")).strip()
    ctx.ledger.append_note(text, author=message.author)
    ctx.notes.append(text)
    return "noted in the research log and passed to the policy"


DEFAULT_HANDLERS: dict[str, Handler] = {
    SteeringKind.pause.value: _pause,
    SteeringKind.resume.value: _resume,
    SteeringKind.stop.value: _stop,
    SteeringKind.note.value: _note,
}


def drain(inbox: Inbox, handlers: Mapping[str, Handler], ctx: SteeringContext) -> list[SteeringMessage]:
    """Apply every pending message a handler knows, oldest first; return those applied."""
    applied = []
    for message in inbox.messages(pending_only=True):
        handler = handlers.get(message.kind)
        if handler is None:
            continue  # kept for a later handler
        outcome = handler(ctx, message)
        inbox.mark_handled(message.id, outcome)
        applied.append(inbox.get(message.id))
    return applied
