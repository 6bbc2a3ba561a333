"""The steering vocabulary is declared once (autoresearch/steering/commands.py) and every way in is
generated from it: chat's tools (what the model calls), the slash grammar and its /help, the
dashboard's campaign actions, the MCP tools of `autoresearch mcp --campaign NAME`, and the Python
API. A command people send that one of them cannot reach fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoresearch import api
from autoresearch.campaign import Ledger
from autoresearch.chat import HELP, ChatError, ChatSession, chat_registry, parse
from autoresearch.chat.slash import COMMANDS as SLASH
from autoresearch.chat.steering_skills import skill_name
from autoresearch.cli.skills_list import cli_registry
from autoresearch.steering import COMMANDS, SENT_BY_PEOPLE, WindowEnd, parse_command, read_messages
from autoresearch.ui.controls import campaign_actions
from tests.autoresearch.campaign.conftest import make_campaign


def test_people_send_every_command_but_nightlys_own():
    assert set(SENT_BY_PEOPLE) == set(COMMANDS) - {WindowEnd}


@pytest.mark.parametrize("command", SENT_BY_PEOPLE, ids=lambda c: c.__name__)
def test_each_command_is_a_chat_tool_a_slash_command_a_dashboard_action_an_mcp_tool_and_in_the_api(command):
    kind, name = command.model_fields["kind"].default, skill_name(command)
    fields = {field for field in command.model_fields if field != "kind"}
    example = json.loads(command.EXAMPLE)

    chat, mcp = chat_registry().get(name), cli_registry("any").get(name)
    assert chat is not None and mcp is not None, f"{command.__name__}: no chat tool or MCP tool {name}"
    assert chat.tooldef.parameters == mcp.tooldef.parameters  # one input: the command's fields
    assert set(chat.tooldef.parameters.get("properties", {})) == fields
    assert command.__doc__ and command.__doc__.split(";")[0] in chat.description

    slash = SLASH[f"/{kind}"]
    assert parse(slash.line(example)) == (name, example)  # its example, written as chat reads it
    assert slash.usage in HELP

    assert campaign_actions()[kind] is command  # POST /api/campaigns/NAME/KIND with the command's fields
    assert getattr(api, command.__name__) is command and command.__name__ in api.__all__


def test_a_chat_session_sends_each_command(tmp_path: Path):
    """`ChatSession.send` is where each command gets its checks against the campaign: none may fall
    through to "not sent from chat"; the ones this campaign can take are queued as they are."""
    Ledger.open(make_campaign(tmp_path, name="steered"))
    session = ChatSession("steered", author="test")
    queued = []
    for command in SENT_BY_PEOPLE:
        built = parse_command(command.model_fields["kind"].default, json.loads(command.EXAMPLE))
        try:
            assert session.send(built).startswith("queued #")
            queued.append(built)
        except ChatError as exc:  # the examples name parameters, trials and requests this campaign lacks
            assert "not sent from chat" not in str(exc), exc
    assert [m.command for m in read_messages("steered")] == queued
    assert {type(c).__name__ for c in queued} >= {"Pause", "Resume", "Stop", "Note", "SetBudget", "SetPriority"}
