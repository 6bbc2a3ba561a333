"""Resolving "provider:model" and policy settings into providers."""

from __future__ import annotations

import json

import pytest

from autoresearch.llm import (
    AnthropicProvider,
    FakeLLMServer,
    LLMError,
    LLMSettings,
    Message,
    OpenAIProvider,
    ProviderKind,
    has_api_key,
    make_provider,
    parse_llm_settings,
)
from autoresearch.llm.openai_provider import token_limit_param

from tests.autoresearch.llm.conftest import FAST, KEY


def test_shorthand_is_parsed_in_one_place():
    assert parse_llm_settings("openai:gpt-4.1-mini") == LLMSettings(provider=ProviderKind.OPENAI, model="gpt-4.1-mini")
    assert parse_llm_settings("anthropic:claude-sonnet-4-5").provider is ProviderKind.ANTHROPIC
    assert parse_llm_settings("openai:llama3.1:8b").model == "llama3.1:8b"  # Ollama tags keep their colon


@pytest.mark.parametrize(
    ("text", "expected"),
    [("gpt-4.1", "provider:model"), ("gemini:pro", "expected openai or anthropic"), ("openai:", "provider:model")],
)
def test_bad_shorthand_says_what_is_expected(text, expected):
    with pytest.raises(LLMError, match=expected):
        parse_llm_settings(text)


def test_missing_key_names_the_variable_and_the_way_out(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert not has_api_key("anthropic:claude-sonnet-4-5")
    with pytest.raises(LLMError, match="ANTHROPIC_API_KEY.*optuna"):
        make_provider("anthropic:claude-sonnet-4-5")


class PolicyBlock:
    """Stands in for the campaign config's policy section (duck-typed)."""

    kind = "llm"
    provider = "anthropic"
    model = "claude-haiku-4-5"
    base_url: str | None = None
    api_key_env = "MY_CLAUDE_KEY"


def test_a_policy_block_without_a_model_is_refused_with_the_field_named():
    block = PolicyBlock()
    block.model = None
    with pytest.raises(LLMError, match=r"model: Input should be a valid string.*needs `provider`"):
        make_provider(block)


def test_make_provider_from_a_policy_block_and_the_env(monkeypatch):
    monkeypatch.setenv("MY_CLAUDE_KEY", KEY)
    assert has_api_key(PolicyBlock())
    with FakeLLMServer(lambda req: f"model={req.model}", api_key=KEY) as server:
        block = PolicyBlock()
        block.base_url = server.anthropic_base_url
        provider = make_provider(block, retry=FAST)
        assert isinstance(provider, AnthropicProvider)
        assert provider.complete([Message.user("hi")]).message.content == "model=claude-haiku-4-5"


def test_openai_compatible_local_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLMServer(lambda req: "from a local model") as server:
        provider = make_provider(LLMSettings(provider="openai", model="qwen2.5:7b", base_url=server.openai_base_url))
        assert isinstance(provider, OpenAIProvider)
        assert provider.complete([Message.user("hi")]).message.content == "from a local model"
        body = server.requests[0].body
    assert json.loads(body)["max_tokens"] == 4096  # what compatible servers accept


def test_sdk_base_url_env_is_honoured_and_picks_the_token_limit_name(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(lambda req: "ok", api_key=KEY) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        make_provider("openai:gpt-5-mini", retry=FAST).complete([Message.user("hi")], max_tokens=77)
        assert json.loads(server.requests[0].body)["max_tokens"] == 77
    assert token_limit_param("https://api.openai.com/v1/") == "max_completion_tokens"
    assert token_limit_param("http://localhost:11434/v1") == "max_tokens"
