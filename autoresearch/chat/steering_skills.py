"""The steering commands as skills, for MCP clients and `autoresearch skills call --campaign NAME`.

Generated from the command models (autoresearch/steering/commands.py), one skill per command
people send: its name is the model's in snake_case (`SetBudget` -> `set_budget`), its input the
model's fields with their types, limits and docstrings, its description the model's docstring.
A call builds the command with `parse_command` and hands it to a `ChatSession`, so an agent gets
chat's checks against the campaign and chat's acknowledgement (`queued #4 budget.max_trials:
16 -> 20 (the runner applies it at its next replan)`); the runner applies it as any other.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import create_model

from autoresearch.chat.session import ChatError, ChatSession
from autoresearch.steering import COMMANDS, CancelTrial, CommandError, Stop, WindowEnd, parse_command
from skills import ErrorCode, SkillContext, SkillFailure, SkillInput, SkillOutput, SkillRegistry, ToolHints
from skills.registry import SkillFn

SENT_BY_PEOPLE = tuple(command for command in COMMANDS if command is not WindowEnd)
"""The commands served as skills (`window_end` is `autoresearch nightly`'s own)."""
_STOPS_WORK = (Stop, CancelTrial)
"""Commands that cancel running jobs (MCP `destructiveHint`); the others only queue a change."""


class Queued(SkillOutput):
    """A steering command posted to the campaign's inbox."""

    message_id: int
    """The inbox message; the runner applies it at its next replan (`autoresearch status NAME` shows it pending)."""
    text: str
    """What changes, as chat acknowledges it (`before -> after`) and when it applies."""


def steering_registry(campaign: str) -> SkillRegistry:
    """One skill per command people send, acting on `campaign`."""
    registry = SkillRegistry()
    for command in SENT_BY_PEOPLE:
        hints = ToolHints(destructive=command in _STOPS_WORK, idempotent=False)
        registry.add(_skill(command, campaign), hints=hints)
    return registry


def _skill(command: type[Any], campaign: str) -> SkillFn:
    kind = command.model_fields["kind"].default
    fields: dict[str, Any] = {name: (field.annotation, field) for name, field in command.model_fields.items() if name != "kind"}
    model = create_model(f"{command.__name__}Input", __base__=SkillInput, __module__=__name__, **fields)

    def steer(ctx: SkillContext, args: SkillInput) -> Queued:
        try:
            session = ChatSession(campaign, home=ctx.home, author="mcp")
            text = session.send(parse_command(kind, args.model_dump(exclude_defaults=True)))
        except (ChatError, CommandError) as exc:
            raise SkillFailure(ErrorCode.failed, str(exc)) from None
        return Queued(message_id=max(session.posted), text=text)

    steer.__name__ = steer.__qualname__ = re.sub(r"(?<!^)(?=[A-Z])", "_", command.__name__).lower()
    steer.__doc__ = f"Steer the campaign ({kind}): {command.__doc__}"
    steer.__annotations__ = {"ctx": SkillContext, "args": model, "return": Queued}
    return steer
