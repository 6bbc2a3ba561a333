"""Slash commands: `/budget max_trials=80` -> the `set_budget` skill with its arguments.

    /status  /best  /trials [N]  /trial N  /logs N [LINES]
    /pause [REASON]  /resume  /stop [REASON]
    /budget max_trials=80 [max_parallel=4 max_gpu_hours=2 max_llm_usd=5 deadline=06:00]
    /space lr=1e-4..1e-2 [activation=relu,tanh ...]
    /try lr=3e-3 hidden=128
    /priority high|75   /cancel N   /note TEXT
    /approve [ID] [REASON]   /deny [ID] [REASON]   /help   /quit
"""

from __future__ import annotations

import shlex
from typing import Any

from compute.suggest import suggest_names

HELP = __doc__.split("\n\n", 1)[1].rstrip()

_SIMPLE = {"/status": "status", "/best": "best", "/resume": "resume"}
_COMMANDS = ("/status", "/best", "/trials", "/trial", "/logs", "/pause", "/resume", "/stop", "/budget", "/space",
             "/try", "/priority", "/cancel", "/note", "/approve", "/deny", "/help", "/quit")  # fmt: skip


class SlashError(ValueError):
    """A slash command that cannot be read; the message shows the right spelling."""


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


def parse(line: str) -> tuple[str, dict[str, Any]]:
    """(skill name, arguments) for a slash command line; ("help", {}) and ("quit", {}) are local."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise SlashError(f"cannot read {line!r}: {exc}") from None
    command, rest = words[0].lower(), words[1:]
    text = line.strip()[len(words[0]) :].strip()
    if command in _SIMPLE:
        return _SIMPLE[command], {}
    if command in ("/help", "/quit"):
        return command[1:], {}
    if command == "/trials":
        return "trials", {"limit": _int(rest[0], "/trials N")} if rest else {}
    if command in ("/trial", "/cancel"):
        return {"/trial": "trial", "/cancel": "cancel_trial"}[command], {"trial": _one_int(rest, f"{command} N")}
    if command == "/logs":
        if not rest:
            raise SlashError("write /logs N (trial N's job log), optionally /logs N LINES")
        logs = {"trial": _int(rest[0], "/logs N")}
        if len(rest) > 1:
            logs["lines"] = _int(rest[1], "/logs N LINES")
        return "logs", logs
    if command in ("/pause", "/stop"):
        return command[1:], {"reason": text}
    if command == "/note":
        if not text:
            raise SlashError("write /note TEXT (an instruction or hypothesis for the policy)")
        return "note", {"text": text}
    if command == "/priority":
        if len(rest) != 1:
            raise SlashError("write /priority P with P 0-100 or idle, low, normal, high, urgent")
        return "set_priority", {"priority": rest[0]}
    if command in ("/approve", "/deny"):
        args: dict[str, Any] = {}
        if rest and rest[0].lstrip("#").isdigit():
            args["request"] = int(rest[0].lstrip("#"))
            rest = rest[1:]
        if rest:
            args["reason"] = " ".join(rest)
        return command[1:], args
    if command == "/budget":
        pairs = _pairs(rest, "/budget max_trials=80")
        return "set_budget", {k: parse_value(v) if k != "deadline" else v for k, v in pairs.items()}
    if command == "/space":
        pairs = _pairs(rest, "/space lr=1e-4..1e-2 activation=relu,tanh")
        return "set_space", {"params": [_space(k, v) for k, v in pairs.items()]}
    if command == "/try":
        pairs = _pairs(rest, "/try lr=3e-3 hidden=128")
        return "try_trial", {"params": [{"name": k, "value": parse_value(v)} for k, v in pairs.items()]}
    raise SlashError(f"unknown command {command}{suggest_names(command, _COMMANDS)}; /help lists the commands")


def _space(name: str, value: str) -> dict[str, Any]:
    if ".." in value:
        low, _, high = value.partition("..")
        lo, hi = parse_value(low), parse_value(high)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi)):
            raise SlashError(f"{name}={value}: a range is two numbers, low..high (e.g. {name}=1e-4..1e-2)")
        return {"name": name, "low": lo, "high": hi}
    return {"name": name, "choices": [parse_value(c) for c in value.split(",") if c != ""]}


def _pairs(words: list[str], example: str) -> dict[str, str]:
    if not words:
        raise SlashError(f"give name=value pairs, e.g. {example}")
    pairs = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or not name or not value:
            raise SlashError(f"{word!r} is not name=value; e.g. {example}")
        pairs[name] = value
    return pairs


def _one_int(words: list[str], usage: str) -> int:
    if len(words) != 1:
        raise SlashError(f"write {usage}")
    return _int(words[0], usage)


def _int(word: str, usage: str) -> int:
    try:
        return int(word.lstrip("#"))
    except ValueError:
        raise SlashError(f"{word!r} is not a number; write {usage}") from None
