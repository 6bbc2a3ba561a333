"""The steering commands as skills: chat's steering tools (the model's, and what slash commands
call) and the MCP tools of `autoresearch mcp --campaign NAME` / `autoresearch skills call --campaign NAME`.

Generated from the command models (autoresearch/steering/commands.py), one skill per command
people send (`SENT_BY_PEOPLE`): its name is the model's in snake_case (`SetBudget` -> `set_budget`),
its input the model's fields with their types, limits and docstrings, its description the model's
docstring. A call builds the command with `parse_command` and hands it to a `ChatSession`, so an
agent gets chat's checks against the campaign and chat's acknowledgement (`queued #4
budget.max_trials: 16 -> 20 (the runner applies it at its next replan)`); the runner applies it as
any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import create_model

from autoresearch.chat.session import ChatError, ChatSession
from autoresearch.steering import SENT_BY_PEOPLE, CancelTrial, CommandError, Stop, parse_command
from skills import ErrorCode, SkillContext, SkillFailure, SkillInput, SkillOutput, SkillRegistry, ToolHints
from skills.registry import SkillFn

_STOPS_WORK = (Stop, CancelTrial)
"""Commands that cancel running jobs (MCP `destructiveHint`); the others only queue a change."""


def skill_name(command: type[Any]) -> str:
    """The skill (and chat tool) of a command: its class name in snake_case (`TryTrial` -> `try_trial`)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", command.__name__).lower()


COMMAND_OF_SKILL: dict[str, type[Any]] = {skill_name(command): command for command in SENT_BY_PEOPLE}
"""Steering skill name -> its command model."""


class Queued(SkillOutput):
    """A steering command posted to the campaign's inbox."""

    message_id: int
    """The inbox message; the runner applies it at its next replan (`autoresearch status NAME` shows it pending)."""
    text: str
    """What changes, as chat acknowledges it (`before -> after`) and when it applies."""


SessionOf = Callable[[SkillContext], ChatSession]
"""The chat session a steering call posts through (raises ChatError when there is none)."""


def steering_skills(session_of: SessionOf) -> SkillRegistry:
    """One skill per command people send, posting through `session_of(ctx)`."""
    registry = SkillRegistry()
    for command in SENT_BY_PEOPLE:
        hints = ToolHints(destructive=command in _STOPS_WORK, idempotent=False)
        registry.add(_skill(command, session_of), hints=hints)
    return registry


def steering_registry(campaign: str) -> SkillRegistry:
    """The steering skills acting on `campaign` for MCP clients and the CLI (author `mcp`)."""
    return steering_skills(lambda ctx: ChatSession(campaign, home=ctx.home, author="mcp"))


def _skill(command: type[Any], session_of: SessionOf) -> SkillFn:
    kind = command.model_fields["kind"].default
    fields: dict[str, Any] = {name: (field.annotation, field) for name, field in command.model_fields.items() if name != "kind"}
    model = create_model(f"{command.__name__}Input", __base__=SkillInput, __module__=__name__, **fields)

    def steer(ctx: SkillContext, args: SkillInput) -> Queued:
        try:
            session = session_of(ctx)
            text = session.send(parse_command(kind, args.model_dump(exclude_defaults=True)))
        except (ChatError, CommandError) as exc:
            raise SkillFailure(ErrorCode.failed, str(exc)) from None
        return Queued(message_id=max(session.posted), text=text)

    steer.__name__ = steer.__qualname__ = skill_name(command)
    steer.__doc__ = f"Steer the campaign ({kind}): {command.__doc__}"
    steer.__annotations__ = {"ctx": SkillContext, "args": model, "return": Queued}
    return steer
