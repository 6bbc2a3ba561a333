"""One chat turn: a slash command, or plain language for a model that calls the same actions.

`Conversation.handle(line)` returns the lines to show. Slash commands need no model. Plain
language goes to the model (when there is one) with the chat actions as tools; every tool
call runs through the same registry as the slash commands, each result is shown as it
happens, and the model ends the turn by saying what it did.
"""

from __future__ import annotations

import json

from autoresearch.chat.session import ChatSession
from autoresearch.chat.slash import HELP, SlashError, parse
from autoresearch.chat.tools import Reply, chat_registry
from autoresearch.llm import LLMError, Message, Provider, ToolResult
from skills import ErrorCode, SkillContext, SkillError

MAX_TOOL_ROUNDS = 6

_SYSTEM = """You help a person steer the ML research campaign {name} (objective: {mode} {metric}).
Use the tools to answer questions (status, best, trials, trial, logs) and to make the changes the
person asks for (pause, resume, stop, set_budget, set_space, try_trial, cancel_trial, set_priority,
note, approve, deny). Make only changes the person asked for. Each tool result says exactly what
changed or why it was refused. Finish with one or two sentences saying what you did or found."""


class Conversation:
    """Turns of one person with one campaign (and, optionally, a model)."""

    def __init__(self, session: ChatSession, provider: Provider | None = None) -> None:
        self.session = session
        self.provider = provider
        self.registry = chat_registry(session)
        self.ctx = SkillContext.create(home=session.home)
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
        """Run one action; (text to show, is_error). Bad arguments are named field by field, with
        the closest field for an unknown one (not the tooling hint a skill's CLI users get)."""
        result = self.registry.call(name, args, self.ctx)
        if isinstance(result, SkillError):
            bad_fields = result.error is ErrorCode.invalid_arguments and result.details
            return f"error: {'; '.join(result.details) if bad_fields else result.message}", True
        assert isinstance(result, Reply)
        return result.text, False

    def _ask(self, text: str) -> list[str]:
        assert self.provider is not None
        campaign = self.session.campaign()
        if not self.history:
            system = _SYSTEM.format(name=campaign.name, mode=campaign.objective.mode.value,
                                    metric=campaign.objective.metric)  # fmt: skip
            self.history.append(Message.system(system))
        self.history.append(Message.user(text))
        shown: list[str] = []
        tools = self.registry.tooldefs()
        try:
            for _ in range(MAX_TOOL_ROUNDS):
                response = self.provider.complete(self.history, tools)
                self.history.append(response.message)
                calls = response.message.tool_calls
                if not calls:
                    return [*shown, response.message.content.strip() or "(the model said nothing)"]
                results = []
                for call in calls:
                    if call.parse_error:
                        output, failed = f"error: {call.parse_error}; send the arguments as one JSON object", True
                    else:
                        output, failed = self._call(call.name, call.arguments)
                    shown.append(f"[{call.name} {_args(call.arguments)}] {output}")
                    results.append(ToolResult(tool_call_id=call.id, content=output, is_error=failed))
                self.history.append(Message.tool(*results))
        except LLMError as exc:
            return [*shown, f"the model could not be reached ({exc}); slash commands still work (/help)"]
        return [*shown, f"(stopped after {MAX_TOOL_ROUNDS} rounds of tool calls)"]


def _args(arguments: dict[str, object] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
