"""The steering vocabulary: one frozen record per command a running campaign understands.

Chat (slash commands and the model's tool calls), the dashboard, MCP, the Python API, the CLI
and nightly all build these records, and every one of those surfaces is generated from them: a
command's `kind`, its fields (types, limits, docstrings), its docstring and its `EXAMPLE` are its
one declaration; the inbox stores them and the runner applies them. `parse_command` is the one
place a (kind, payload) pair becomes a command, so every command is validated once, the same
way, whoever sends it.

On disk (`inbox.db`, one row per message) a command is its `kind` and its other fields as a JSON
`payload`, the format older versions wrote: `pause {"reason": "..."}`, `note {"text": "..."}`,
`budget {"changes": {...}}`, `space {"params": {...}}`, `priority {"priority": 75}`,
`try {"params": {...}}`, `cancel {"trial": 3}`, `approve {"request": 2, "reason": "..."}`,
`window_end {"at": "2026-12-01T06:00:00+00:00"}`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator


class CommandError(ValueError):
    """A command that cannot be built; the message names the kind, the field and an example."""


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    EXAMPLE: ClassVar[str] = "{}"
    """A payload of this kind, for error messages."""

    def payload(self) -> dict[str, Any]:
        """The JSON payload stored in the inbox (every field but `kind`)."""
        return self.model_dump(mode="json", exclude={"kind"}, exclude_defaults=True)


class Pause(_Command):
    """No new trials; running ones finish; the campaign waits for resume or stop."""

    kind: Literal["pause"] = "pause"
    reason: str = ""
    """Why (the campaign's state reason); default: `paused by AUTHOR`."""
    EXAMPLE: ClassVar[str] = '{"reason": "checking the data"}'


class Resume(_Command):
    """Back to proposing after a pause."""

    kind: Literal["resume"] = "resume"


class Stop(_Command):
    """Cancel running trials' jobs; the campaign ends as stopped (also denies open approvals)."""

    kind: Literal["stop"] = "stop"
    reason: str = ""
    """Why (the campaign's state reason); default: `stopped by AUTHOR`."""
    EXAMPLE: ClassVar[str] = '{"reason": "enough"}'


class Note(_Command):
    """Appended to the research log and shown to the policy at its next proposal."""

    kind: Literal["note"] = "note"
    text: Annotated[str, Field(min_length=1)]
    """The instruction or hypothesis (surrounding blanks are dropped)."""
    EXAMPLE: ClassVar[str] = '{"text": "try a smaller lr first"}'

    @field_validator("text", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value


class SetBudget(_Command):
    """Change budget fields; validated again against the campaign when applied."""

    kind: Literal["budget"] = "budget"
    changes: Annotated[dict[str, Any], Field(min_length=1)]
    """Budget field -> new value (max_trials, max_parallel, max_gpu_hours, deadline, max_llm_usd)."""
    EXAMPLE: ClassVar[str] = '{"changes": {"max_trials": 80}}'


class SetSpace(_Command):
    """Replace parameters' ranges or choices; validated again when applied."""

    kind: Literal["space"] = "space"
    params: Annotated[dict[str, Any], Field(min_length=1)]
    """Parameter -> `[low, high]`, a list of choices, or a full spec."""
    EXAMPLE: ClassVar[str] = '{"params": {"lr": [0.0001, 0.01], "act": ["relu", "tanh"]}}'


class SetPriority(_Command):
    """Set compute.priority of future, pending and running jobs (a raise may need approval)."""

    kind: Literal["priority"] = "priority"
    priority: int | str
    """0-100 or idle, low, normal, high, urgent."""
    EXAMPLE: ClassVar[str] = '{"priority": 75}'


class TryTrial(_Command):
    """Put this trial in the ledger next."""

    kind: Literal["try"] = "try"
    params: dict[str, Any]
    """Every parameter's value (chat fills missing ones from the best trial)."""
    rationale: str = ""
    """Why; default: `requested by AUTHOR in chat`."""
    EXAMPLE: ClassVar[str] = '{"params": {"lr": 0.003, "hidden": 128}}'


class CancelTrial(_Command):
    """Cancel a proposed or running trial (and its job)."""

    kind: Literal["cancel"] = "cancel"
    trial: Annotated[int, Field(ge=0)]
    """The trial number."""
    EXAMPLE: ClassVar[str] = '{"trial": 3}'


class Approve(_Command):
    """Yes to an approval request (read by the runner while it waits for answers)."""

    kind: Literal["approve"] = "approve"
    request: int | None = None
    """The request id; default: the oldest open one."""
    reason: str = ""
    EXAMPLE: ClassVar[str] = '{"request": 1, "reason": "cheap enough"}'


class Deny(_Command):
    """No to an approval request (read by the runner while it waits for answers)."""

    kind: Literal["deny"] = "deny"
    request: int | None = None
    """The request id; default: the oldest open one."""
    reason: str = ""
    EXAMPLE: ClassVar[str] = '{"request": 1, "reason": "too risky"}'


class WindowEnd(_Command):
    """Posted by `autoresearch nightly` when its window ends, to wake the runner; with `at`, the
    window ends then (earlier than planned: nightly got SIGTERM or Ctrl-C)."""

    kind: Literal["window_end"] = "window_end"
    at: datetime | None = None
    """An aware datetime (a naive one is read as local time)."""
    EXAMPLE: ClassVar[str] = '{"at": "2026-12-01T06:00:00+00:00"}'

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return value.astimezone() if value is not None and value.tzinfo is None else value


Command = Annotated[
    Pause | Resume | Stop | Note | SetBudget | SetSpace | SetPriority | TryTrial | CancelTrial | Approve | Deny
    | WindowEnd,
    Field(discriminator="kind"),
]
"""Any steering command (a discriminated union on `kind`)."""

COMMANDS: tuple[type[_Command], ...] = (Pause, Resume, Stop, Note, SetBudget, SetSpace, SetPriority, TryTrial,
                                        CancelTrial, Approve, Deny, WindowEnd)  # fmt: skip
SENT_BY_PEOPLE: tuple[type[_Command], ...] = tuple(command for command in COMMANDS if command is not WindowEnd)
"""The commands people (and agents) send: chat's tools and slash commands, the dashboard's campaign
actions and the MCP steering tools are generated from these (`window_end` is `autoresearch nightly`'s own)."""
KINDS: dict[str, type[_Command]] = {c.model_fields["kind"].default: c for c in COMMANDS}
"""kind -> command class."""

_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def parse_command(kind: str, payload: dict[str, Any] | None = None) -> Command:
    """The command of `kind` with `payload`'s fields; raises `CommandError` saying what to write."""
    known = ", ".join(KINDS)
    if kind not in KINDS:
        if not _KIND.match(kind):
            raise CommandError(f"message kind {kind!r} must be a lower-case word (letters, digits, _); known: {known}")
        raise CommandError(f"unknown message kind {kind!r}; known: {known}")
    try:
        return _ADAPTER.validate_python({**(payload or {}), "kind": kind})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "payload"
        raise CommandError(
            f"a {kind} message needs payload {KINDS[kind].EXAMPLE}: {where}: {first['msg']}"
        ) from None
