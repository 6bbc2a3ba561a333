"""Slash commands, generated from the chat actions: `/budget max_trials=80` -> the `set_budget`
skill with `{"changes": {"max_trials": 80}}`.

Every chat action is a slash command: a question by its skill name (`/status`, `/logs TRIAL
[LINES]`), a steering command by its `kind` (`/pause`, `/budget`, `/space`, `/try` ...). The
words after it fill the action's fields in their declared order, each read by its type:

- a dict field takes `name=value` pairs: `lr=1e-4..1e-2` is `[0.0001, 0.01]`, `act=relu,tanh` is
  `["relu", "tanh"]`, anything else one value (`128` -> 128, `3e-3` -> 0.003, `true`, text);
- an int field takes one number (`#3` is 3), skipped when the field is optional and the word is not one;
- a str field takes the rest of the line (`/pause checking the data`);
- any other field takes one word, read as a value.

`HELP` (what `/help` shows) lists each command with its fields and, for steering, its
`EXAMPLE` written as a slash command; `/help` and `/quit` are the chat's own.
"""

from __future__ import annotations

import json
import shlex
import types
from dataclasses import dataclass
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from autoresearch.chat.steering_skills import COMMAND_OF_SKILL
from autoresearch.chat.tools import chat_registry
from compute.suggest import suggest_names

LOCAL = {"/help": "this list", "/quit": "leave chat (the campaign goes on)"}


M = TypeVar("M", bound=BaseModel)


class SlashError(ValueError):
    """A slash command that cannot be read; the message shows the right spelling."""


@dataclass(frozen=True)
class Slash:
    """One slash command: the skill it calls and the fields its words fill."""

    word: str
    """`/budget`."""
    skill: str
    """`set_budget`."""
    fields: dict[str, FieldInfo]
    """The skill's input fields, in order."""
    summary: str
    """The first sentence of the action's description."""
    example: dict[str, Any] | None
    """A steering command's `EXAMPLE` payload."""

    @property
    def usage(self) -> str:
        """`/logs TRIAL [LINES]`, `/budget name=value ...`."""
        parts = []
        for name, info in self.fields.items():
            text = "name=value ..." if _shape(info) == "pairs" else name.upper()
            parts.append(text if info.is_required() else f"[{text}]")
        return " ".join([self.word, *parts])

    def line(self, payload: dict[str, Any]) -> str:
        """`payload` written as this slash command (the inverse of `parse`)."""
        words = [self.word]
        for name, info in self.fields.items():
            if name not in payload:
                continue
            value = payload[name]
            if _shape(info) == "pairs":
                words += [f"{key}={_write(item)}" for key, item in value.items()]
            else:
                words.append(str(value))
        return " ".join(words)


def _table() -> dict[str, Slash]:
    table = {}
    for skill in chat_registry():
        command = COMMAND_OF_SKILL.get(skill.name)
        word = "/" + (command.model_fields["kind"].default if command else skill.name)
        example = json.loads(command.EXAMPLE) if command else None
        summary = skill.description.removeprefix(f"Steer the campaign ({word[1:]}): ").split(". ")[0].rstrip(".")
        table[word] = Slash(word, skill.name, dict(skill.input_model.model_fields), summary, example)
    return table


def _help() -> str:
    lines = []
    for slash in COMMANDS.values():
        example = f" (e.g. {slash.line(slash.example)})" if slash.example and slash.fields else ""
        lines.append(f"{slash.usage:<30} {slash.summary}{example}")
    lines += [f"{word:<30} {text}" for word, text in LOCAL.items()]
    return "\n".join(lines)


def parse_value(text: str) -> Any:
    """`128` -> 128, `3e-3` -> 0.003, `true` -> True, anything else stays a string."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_text_values(command: M) -> M:
    """`command` with the string values of its dict fields read as a slash command reads them
    (`{"max_trials": "80"}` -> `{"max_trials": 80}`), for forms whose inputs are all text."""
    update = {
        name: {key: parse_value(v) if isinstance(v, str) else v for key, v in getattr(command, name).items()}
        for name, info in type(command).model_fields.items()
        if _shape(info) == "pairs"
    }
    return command.model_copy(update=update)


def parse(line: str) -> tuple[str, dict[str, Any]]:
    """(skill name, arguments) for a slash command line; ("help", {}) and ("quit", {}) are local."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise SlashError(f"cannot read {line!r}: {exc}") from None
    word, rest = words[0].lower(), words[1:]
    if word in LOCAL:
        return word[1:], {}
    slash = COMMANDS.get(word)
    if slash is None:
        known = [*COMMANDS, *LOCAL]
        raise SlashError(f"unknown command {word}{suggest_names(word, known)}; /help lists the commands")
    text = line.strip()[len(words[0]) :].strip()
    args: dict[str, Any] = {}
    for name, info in slash.fields.items():
        shape = _shape(info)
        if shape == "text":
            said = text if len(rest) == len(words) - 1 else " ".join(rest)
            rest = []
            if said:
                args[name] = said
        elif shape == "pairs":
            pairs = {}
            while rest and "=" in rest[0]:
                key, _, value = rest.pop(0).partition("=")
                if not key or not value:
                    raise SlashError(f"{key}={value!r} is not name=value; write {slash.usage}{_eg(slash)}")
                pairs[key] = _pair_value(key, value)
            if pairs:
                args[name] = pairs
        elif rest and (shape != "number" or rest[0].lstrip("#").isdigit()):
            args[name] = int(rest.pop(0).lstrip("#")) if shape == "number" else parse_value(rest.pop(0))
        if name not in args and info.is_required():
            raise SlashError(f"write {slash.usage}{_eg(slash)}")
    if rest:
        raise SlashError(f"{rest[0]!r} is not understood here; write {slash.usage}{_eg(slash)}")
    return slash.skill, args


def _eg(slash: Slash) -> str:
    return f", e.g. {slash.line(slash.example)}" if slash.example else ""


def _shape(info: FieldInfo) -> str:
    """How a field is written: `pairs` (a dict), `number` (an int), `text` (a str), else `word`."""
    kinds = [a for a in (get_args(info.annotation) if _is_union(info.annotation) else (info.annotation,))
             if a is not type(None)]  # fmt: skip
    if any((get_origin(a) or a) is dict for a in kinds):
        return "pairs"
    if kinds == [int]:
        return "number"
    return "text" if kinds == [str] else "word"


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _pair_value(name: str, value: str) -> Any:
    if ".." in value:
        low, _, high = value.partition("..")
        lo, hi = parse_value(low), parse_value(high)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi)):
            raise SlashError(f"{name}={value}: a range is two numbers, low..high (e.g. {name}=1e-4..1e-2)")
        return [lo, hi]
    if "," in value:
        return [parse_value(c) for c in value.split(",") if c != ""]
    return parse_value(value)


def _write(value: Any) -> str:
    if isinstance(value, list):
        numbers = len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        return f"{value[0]}..{value[1]}" if numbers else ",".join(str(v) for v in value)
    return str(value)


COMMANDS = _table()
"""Slash word -> its command, one per chat action."""
HELP = _help()
"""What `/help` shows."""
