"""Chat's actions as typed skills: one definition serves the slash commands and the model.

`chat_registry()` holds the questions (status, best, trials, trial, logs), written here, and the
steering actions, generated from the command models (autoresearch/chat/steering_skills.py). Each
call acts on the `ChatSession` of its `ChatContext`; slash commands are parsed into (skill name,
arguments) and go through `SkillRegistry.call` exactly like a model's tool calls, so both get the
same validation and the same acknowledgement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from autoresearch.chat.session import ChatError, ChatSession
from autoresearch.chat.steering_skills import steering_skills
from skills import ErrorCode, Index, SkillContext, SkillFailure, SkillInput, SkillOutput, SkillRegistry


@dataclass
class ChatContext(SkillContext):
    """A SkillContext for one chat: the session every action acts on."""

    session: ChatSession | None = None


def chat_context(session: ChatSession) -> ChatContext:
    """The context chat's actions run with, on the session's home."""
    base = SkillContext.create(home=session.home)
    return ChatContext(home=base.home, tracking=base.tracking, session=session)


def session_of(ctx: SkillContext) -> ChatSession:
    if isinstance(ctx, ChatContext) and ctx.session is not None:
        return ctx.session
    raise ChatError("chat's actions need a chat session (autoresearch chat NAME)")


class Reply(SkillOutput):
    """What an action did or found, in plain text."""

    text: str


class NoInput(SkillInput):
    """No arguments."""


class TrialInput(SkillInput):
    trial: Index
    """The trial number."""


class LogsInput(SkillInput):
    trial: Index
    """The trial number."""
    lines: Annotated[int, Field(ge=1, le=500)] = 40
    """How many lines of the end of its job log."""


class TrialsInput(SkillInput):
    limit: Annotated[int, Field(ge=1, le=500)] = 20
    """How many of the latest trials."""


def _reply(ctx: SkillContext, ask: Callable[[ChatSession], str]) -> Reply:
    try:
        return Reply(text=ask(session_of(ctx)))
    except ChatError as exc:
        raise SkillFailure(ErrorCode.failed, str(exc)) from None


def status(ctx: SkillContext, args: NoInput) -> Reply:
    """Where the campaign stands: state, trials, budget, search space, best trial, what waits for approval."""
    return _reply(ctx, lambda session: session.status())


def best(ctx: SkillContext, args: NoInput) -> Reply:
    """The best complete trial so far: its value and parameters."""
    return _reply(ctx, lambda session: session.best())


def trials(ctx: SkillContext, args: TrialsInput) -> Reply:
    """The latest trials: state, value, parameters."""
    return _reply(ctx, lambda session: session.trials(args.limit))


def trial(ctx: SkillContext, args: TrialInput) -> Reply:
    """One trial's story: parameters, why it was proposed, its result, or why it failed (class and log excerpt)."""
    return _reply(ctx, lambda session: session.trial(args.trial))


def logs(ctx: SkillContext, args: LogsInput) -> Reply:
    """The end of a trial's job log."""
    return _reply(ctx, lambda session: session.logs(args.trial, args.lines))


def chat_registry() -> SkillRegistry:
    """The chat actions: the questions, then one steering action per command people send."""
    registry = SkillRegistry()
    for fn in (status, best, trials, trial, logs):
        registry.add(fn)
    return registry.include(steering_skills(session_of))
