"""One chat turn: a slash command, or plain language for a model that calls the same actions.

`Conversation.handle(line)` returns the lines to show. Slash commands need no model. Plain
language goes to the model (when there is one) with the chat actions as tools; every tool
call runs through the same registry as the slash commands, each result is shown as it
happens, and the model ends the turn by saying what it did. The model's turns run in the one
tool loop the policy uses too (`autoresearch.llm.run_tool_loop`, without a finish tool).
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from autoresearch.chat.session import ChatSession
from autoresearch.chat.slash import HELP, SlashError, parse
from autoresearch.chat.steering_skills import COMMAND_OF_SKILL
from autoresearch.chat.tools import chat_context, chat_registry
from autoresearch.llm import LLMError, Message, Provider, ToolCall, ToolResult, run_tool_loop
from skills import ErrorCode, SkillError

MAX_TOOL_ROUNDS = 6

_SYSTEM = """You help a person steer the ML research campaign {name} (objective: {mode} {metric}).
Use the tools to answer questions ({questions}) and to make the changes the person asks for
({changes}). Make only changes the person asked for. Each tool result says exactly what
changed or why it was refused. Finish with one or two sentences saying what you did or found."""


class Conversation:
    """Turns of one person with one campaign (and, optionally, a model)."""

    def __init__(self, session: ChatSession, provider: Provider | None = None) -> None:
        self.session = session
        self.provider = provider
        self.registry = chat_registry()
        self.ctx = chat_context(session)
        self.history: list[Message] = []
        self.done = False

    def handle(self, line: str) -> list[str]:
        """The lines to show for one input line."""
        line = line.strip()
        if not line:
            return []
        if line.startswith("/"):
            return self._slash(line)
        if self.provider is None:
            return ["no LLM is configured, so plain language is not understood: use slash commands "
                    "(/help lists them), or start chat with --model provider:model and its API key set"]  # fmt: skip
        return self._ask(line)

    def _slash(self, line: str) -> list[str]:
        try:
            name, args = parse(line)
        except SlashError as exc:
            return [f"error: {exc}"]
        if name == "help":
            return [HELP]
        if name == "quit":
            self.done = True
            return []
        return [self._call(name, args)[0]]

    def _call(self, name: str, args: dict[str, object] | str) -> tuple[str, bool]:
        """Run one action; (text to show, is_error)."""
        result = self.registry.call(name, args, self.ctx)
        return _text(result), isinstance(result, SkillError)

    def _ask(self, text: str) -> list[str]:
        """Plain language: the model calls the chat actions in the policy's tool loop until it answers."""
        assert self.provider is not None
        campaign = self.session.campaign()
        names = self.registry.names()
        system = _SYSTEM.format(name=campaign.name, mode=campaign.objective.mode.value,
                                metric=campaign.objective.metric,
                                questions=", ".join(n for n in names if n not in COMMAND_OF_SKILL),
                                changes=", ".join(n for n in names if n in COMMAND_OF_SKILL))  # fmt: skip
        start = self.history or [Message.system(system)]
        shown: list[str] = []

        def show(call: ToolCall, result: ToolResult) -> None:
            shown.append(f"[{call.name} {_args(call.arguments)}] {result.content}")

        try:
            outcome = run_tool_loop(self.provider, [*start, Message.user(text)], self.registry, self.ctx,
                                    max_turns=MAX_TOOL_ROUNDS, max_invalid=MAX_TOOL_ROUNDS, render=_text,
                                    on_result=show)  # fmt: skip
        except LLMError as exc:
            return [*shown, f"the model could not be reached ({exc}); slash commands still work (/help)"]
        self.history = outcome.messages
        if not outcome.finished:
            return [*shown, f"({outcome.reason})"]
        return [*shown, outcome.answer or "(the model said nothing)"]


def _text(result: BaseModel) -> str:
    """What a chat action says: its reply, or the error with bad arguments named field by field and
    the closest field for an unknown one (not the tooling hint a skill's CLI users get)."""
    if isinstance(result, SkillError):
        bad_fields = result.error is ErrorCode.invalid_arguments and result.details
        return f"error: {'; '.join(result.details) if bad_fields else result.message}"
    text = getattr(result, "text", None)  # every chat action answers with its text (Reply, Queued)
    assert isinstance(text, str), result
    return text


def _args(arguments: dict[str, object] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
