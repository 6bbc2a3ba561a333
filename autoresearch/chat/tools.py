"""Chat's actions as typed skills: one definition serves the slash commands and the model.

`chat_registry(session)` returns a `SkillRegistry` whose skills act on that session; slash
commands are parsed into (skill name, arguments) and go through `SkillRegistry.call` exactly
like a model's tool calls, so both get the same validation and the same acknowledgement.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from autoresearch.chat.session import ChatError, ChatSession
from skills import ErrorCode, Index, SkillContext, SkillFailure, SkillInput, SkillOutput, SkillRegistry

Scalar = str | int | float | bool


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


class ReasonInput(SkillInput):
    reason: str = ""
    """Why (recorded in the research log)."""


class NoteInput(SkillInput):
    text: Annotated[str, Field(min_length=1)]
    """An instruction or hypothesis for the policy, kept in the research log."""


class BudgetInput(SkillInput):
    """Budget fields to change; leave the others null."""

    max_trials: Annotated[int | None, Field(ge=1, le=100_000)] = None
    max_parallel: Annotated[int | None, Field(ge=1, le=1024)] = None
    max_gpu_hours: Annotated[float | None, Field(gt=0)] = None
    max_llm_usd: Annotated[float | None, Field(ge=0)] = None
    deadline: str | None = None
    """ISO datetime (2026-12-01T06:00) or time of day (06:00)."""


class ParamChange(SkillInput):
    name: str
    """A search-space parameter."""
    low: float | None = None
    """New lower bound (float and int parameters)."""
    high: float | None = None
    """New upper bound (float and int parameters)."""
    choices: list[Scalar] | None = None
    """New choices (categorical parameters)."""


class SpaceInput(SkillInput):
    params: Annotated[list[ParamChange], Field(min_length=1)]
    """The parameters whose range or choices change (narrowed or widened)."""


class ParamValue(SkillInput):
    name: str
    value: Scalar


class TryInput(SkillInput):
    params: Annotated[list[ParamValue], Field(min_length=1)]
    """Parameter values; ones left out are taken from the best trial so far."""


class PriorityInput(SkillInput):
    priority: str
    """0-100 or idle, low, normal, high, urgent."""


class AnswerInput(SkillInput):
    request: Index | None = None
    """The approval request id (default: the oldest one waiting)."""
    reason: str = ""


def _space_value(change: ParamChange) -> Any:
    if change.choices is not None:
        return list(change.choices)
    if change.low is None or change.high is None:
        raise ChatError(f"{change.name}: give low and high (float/int) or choices (categorical)")
    as_int = all(float(v).is_integer() for v in (change.low, change.high))
    return [int(change.low), int(change.high)] if as_int else [change.low, change.high]


def chat_registry(session: ChatSession) -> SkillRegistry:
    """The chat actions bound to `session`."""
    registry = SkillRegistry()

    def reply(call: Any) -> Reply:
        try:
            return Reply(text=call())
        except ChatError as exc:
            raise SkillFailure(ErrorCode.failed, str(exc)) from None

    def status(ctx: SkillContext, args: NoInput) -> Reply:
        """Where the campaign stands: state, trials, budget, search space, best trial, what waits for approval."""
        return reply(session.status)

    def best(ctx: SkillContext, args: NoInput) -> Reply:
        """The best complete trial so far: its value and parameters."""
        return reply(session.best)

    def trials(ctx: SkillContext, args: TrialsInput) -> Reply:
        """The latest trials: state, value, parameters."""
        return reply(lambda: session.trials(args.limit))

    def trial(ctx: SkillContext, args: TrialInput) -> Reply:
        """One trial's story: parameters, why it was proposed, its result, or why it failed (class and log excerpt)."""
        return reply(lambda: session.trial(args.trial))

    def logs(ctx: SkillContext, args: LogsInput) -> Reply:
        """The end of a trial's job log."""
        return reply(lambda: session.logs(args.trial, args.lines))

    def pause(ctx: SkillContext, args: ReasonInput) -> Reply:
        """Pause the campaign: running trials finish, no new ones start."""
        return reply(lambda: session.pause(args.reason))

    def resume(ctx: SkillContext, args: NoInput) -> Reply:
        """Resume a paused campaign."""
        return reply(session.resume)

    def stop(ctx: SkillContext, args: ReasonInput) -> Reply:
        """Stop the campaign for good: running trials are cancelled."""
        return reply(lambda: session.stop(args.reason))

    def note(ctx: SkillContext, args: NoteInput) -> Reply:
        """Add an instruction or hypothesis for the policy (the research log keeps it)."""
        return reply(lambda: session.note(args.text))

    def set_budget(ctx: SkillContext, args: BudgetInput) -> Reply:
        """Change budget limits (max_trials, max_parallel, max_gpu_hours, max_llm_usd, deadline)."""
        changes = args.model_dump(exclude_none=True)
        return reply(lambda: session.set_budget(changes))

    def set_space(ctx: SkillContext, args: SpaceInput) -> Reply:
        """Narrow or widen the search space: new bounds of float/int parameters, new choices of categorical ones."""
        return reply(lambda: session.set_space({c.name: _space_value(c) for c in args.params}))

    def try_trial(ctx: SkillContext, args: TryInput) -> Reply:
        """Run a specific trial next, with these parameter values."""
        return reply(lambda: session.try_trial({p.name: p.value for p in args.params}))

    def cancel_trial(ctx: SkillContext, args: TrialInput) -> Reply:
        """Cancel a proposed or running trial (and its job)."""
        return reply(lambda: session.cancel(args.trial))

    def set_priority(ctx: SkillContext, args: PriorityInput) -> Reply:
        """Change the compute priority of the campaign's jobs (pending, running and future)."""
        value: int | str = int(args.priority) if args.priority.strip().isdigit() else args.priority
        return reply(lambda: session.set_priority(value))

    def approve(ctx: SkillContext, args: AnswerInput) -> Reply:
        """Say yes to an action waiting for approval."""
        return reply(lambda: session.answer(True, args.request, args.reason))

    def deny(ctx: SkillContext, args: AnswerInput) -> Reply:
        """Say no to an action waiting for approval."""
        return reply(lambda: session.answer(False, args.request, args.reason))

    for fn in (status, best, trials, trial, logs, pause, resume, stop, note, set_budget, set_space, try_trial,
               cancel_trial, set_priority, approve, deny):  # fmt: skip
        registry.add(fn)
    return registry
