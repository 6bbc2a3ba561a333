"""Generated tool definitions: valid JSON Schema, strict where possible, accepted by the SDKs."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import ToolParam
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionToolParam
from pydantic import TypeAdapter

from autoresearch.llm.fake_server import FakeLLMServer, FakeRequest
from skills import (
    SkillInput,
    anthropic_tools,
    input_schema,
    openai_tool,
    openai_tools,
    strict_schema,
)
from skills.builtin import builtin_registry

TOOLS = builtin_registry().tooldefs()
NAMES = [tool.name for tool in TOOLS]


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every object schema inside `node`."""
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


@pytest.mark.parametrize("tool", TOOLS, ids=NAMES)
def test_parameters_are_valid_draft_2020_12(tool: Any) -> None:
    Draft202012Validator.check_schema(tool.parameters)
    assert tool.parameters["type"] == "object"
    assert "$ref" not in json.dumps(tool.parameters)  # self-contained
    assert tool.description and tool.name.isidentifier()


@pytest.mark.parametrize("tool", [t for t in TOOLS if t.strict], ids=[t.name for t in TOOLS if t.strict])
def test_strict_schemas_follow_openai_strict_rules(tool: Any) -> None:
    Draft202012Validator.check_schema(tool.strict_parameters)
    for obj in _objects(tool.strict_parameters):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert '"default"' not in json.dumps(tool.strict_parameters)


@pytest.mark.parametrize("tool", TOOLS, ids=NAMES)
def test_plain_schemas_require_only_required_fields(tool: Any) -> None:
    skill = builtin_registry().get(tool.name)
    required = {name for name, f in skill.input_model.model_fields.items() if f.is_required()}
    assert set(tool.parameters.get("required", [])) == required


def test_which_skills_are_strict() -> None:
    # Free-form dicts (env, labels, since) cannot be strict; everything else is.
    assert {t.name for t in TOOLS if not t.strict} == {"submit_job", "list_jobs", "wait_for_jobs"}


@pytest.mark.parametrize("tool", TOOLS, ids=NAMES)
def test_sdk_parameter_types_accept_the_definitions(tool: Any) -> None:
    openai_param = TypeAdapter(ChatCompletionToolParam).validate_python(openai_tool(tool))
    assert openai_param["function"].get("strict", False) is tool.strict
    assert openai_param["function"]["parameters"] == (tool.strict_parameters or tool.parameters)
    anthropic_param = TypeAdapter(ToolParam).validate_python(anthropic_tools([tool])[0])
    assert anthropic_param["input_schema"] == tool.parameters


def test_a_strict_call_with_every_field_null_validates_to_the_defaults() -> None:
    skill = builtin_registry().get("read_logs")
    props = skill.tooldef.strict_parameters["properties"]
    sent = dict.fromkeys(props) | {"job_id": "job-0123456789"}
    Draft202012Validator(skill.tooldef.strict_parameters).validate(sent)
    args = skill.input_model.model_validate(sent)
    assert args.max_matches == 200 and args.tail is None


def test_non_strict_schema_falls_back() -> None:
    class Free(SkillInput):
        tags: dict[str, str]
        """Anything."""

    assert strict_schema(input_schema(Free)) is None


def test_the_real_sdks_send_the_tools() -> None:
    seen: list[FakeRequest] = []

    def script(request: FakeRequest) -> str:
        seen.append(request)
        return "ok"

    with FakeLLMServer(script, api_key="sk-test") as server:
        oa = openai.OpenAI(api_key="sk-test", base_url=server.openai_base_url, max_retries=0)
        oa.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], tools=openai_tools(TOOLS)
        )
        an = anthropic.Anthropic(api_key="sk-test", base_url=server.anthropic_base_url, max_retries=0)
        an.messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}], tools=anthropic_tools(TOOLS)
        )
    openai_body = json.loads(server.requests[0].body)
    assert [t["function"]["name"] for t in openai_body["tools"]] == NAMES
    assert [t["function"]["parameters"] for t in openai_body["tools"]] == [t.strict_parameters or t.parameters for t in TOOLS]
    anthropic_body = json.loads(server.requests[1].body)
    assert [t["input_schema"] for t in anthropic_body["tools"]] == [t.parameters for t in TOOLS]
    assert [[t.name for t in request.tools] for request in seen] == [NAMES, NAMES]
