"""Which model to talk to, and the one place that turns that into a Provider.

`policy: {kind: llm, provider: openai, model: gpt-4.1-mini, base_url: ..., api_key_env: ...}`
maps onto `LLMSettings`; the shorthand "openai:gpt-4.1-mini" is read by `parse_llm_settings`.
The settings hold the *name* of the environment variable with the key, never the key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from autoresearch.llm.errors import LLMError
from autoresearch.llm.pricing import DEFAULT_PRICES, PriceTable
from autoresearch.llm.provider import SDKProvider
from autoresearch.llm.retry import RetryPolicy
from autoresearch.llm.secrets import redact


class ProviderKind(str, Enum):
    """Which SDK and wire format to use."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"


DEFAULT_KEY_ENV = {ProviderKind.OPENAI: "OPENAI_API_KEY", ProviderKind.ANTHROPIC: "ANTHROPIC_API_KEY"}


class LLMSettings(BaseModel):
    """Where the policy's model lives."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    provider: ProviderKind
    """openai (also any OpenAI-compatible server) or anthropic."""
    model: str
    """The model name the provider expects (e.g. `gpt-4.1-mini`, `claude-sonnet-4-5`)."""
    base_url: str | None = None
    """Custom endpoint: OpenAI-style ends in /v1 (http://localhost:11434/v1); Anthropic has no /v1."""
    api_key_env: str | None = None
    """Environment variable holding the key; default OPENAI_API_KEY / ANTHROPIC_API_KEY."""

    def key_env(self) -> str:
        """The environment variable the key is read from."""
        return self.api_key_env or DEFAULT_KEY_ENV[self.provider]


def parse_llm_settings(text: str) -> LLMSettings:
    """Read "provider:model" (e.g. "anthropic:claude-sonnet-4-5"; the model may contain ':')."""
    provider, sep, model = text.partition(":")
    choices = " or ".join(k.value for k in ProviderKind)
    if not sep or not model:
        raise LLMError(f"cannot read LLM {text!r}: expected 'provider:model', e.g. 'openai:gpt-4.1-mini'")
    try:
        kind = ProviderKind(provider.strip().lower())
    except ValueError:
        raise LLMError(f"unknown LLM provider {provider!r} in {text!r}: expected {choices}") from None
    return LLMSettings(provider=kind, model=model.strip())


def _as_settings(config: LLMSettings | str | Any) -> LLMSettings:
    if isinstance(config, LLMSettings):
        return config
    if isinstance(config, str):
        return parse_llm_settings(config)
    try:
        return LLMSettings.model_validate(config, from_attributes=True)
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise LLMError(
            f"invalid LLM settings ({fields}): the policy needs `provider` (openai or anthropic) and "
            "`model`, e.g. `provider: openai` and `model: gpt-4.1-mini`"
        ) from None


def has_api_key(config: LLMSettings | str | Any) -> bool:
    """True when the key's environment variable is set (what `policy.kind: auto` checks)."""
    return bool(os.environ.get(_as_settings(config).key_env()))


def make_provider(
    config: LLMSettings | str | Any,
    *,
    retry: RetryPolicy = RetryPolicy(),
    prices: PriceTable = DEFAULT_PRICES,
    sleep: Callable[[float], None] = time.sleep,
) -> SDKProvider:
    """The provider for `config`: LLMSettings, a "provider:model" string, or any object with
    `provider`, `model`, `base_url` and `api_key_env` attributes (the campaign's policy block).

    A custom OpenAI-compatible `base_url` with no `api_key_env` needs no key (vLLM, Ollama).
    """
    from autoresearch.llm.anthropic_provider import AnthropicProvider
    from autoresearch.llm.openai_provider import OpenAIProvider

    settings = _as_settings(config)
    env = settings.key_env()
    key = os.environ.get(env)
    if not key:
        if settings.provider is ProviderKind.OPENAI and settings.base_url and not settings.api_key_env:
            key = "no-key-needed"
        else:
            raise LLMError(
                f"{settings.provider.value}:{settings.model} needs an API key in the environment "
                f"variable {env}, which is not set. Set it, or name another variable with "
                "policy.api_key_env, or use policy kind 'optuna' to run without a model."
            )
    cls = OpenAIProvider if settings.provider is ProviderKind.OPENAI else AnthropicProvider
    base_url = redact(settings.base_url) if settings.base_url else None
    if base_url and "[REDACTED]" in base_url:
        raise LLMError(f"base_url {base_url!r} embeds a secret; put the key in {env} instead")
    return cls(
        settings.model,
        api_key=key,
        base_url=settings.base_url,
        api_key_env=env,
        retry=retry,
        prices=prices,
        sleep=sleep,
    )
