"""Which model chat talks to: `--model provider:model`, else the campaign's policy model when
its key is set, else none (slash commands only)."""

from __future__ import annotations

from autoresearch.campaign import Campaign
from autoresearch.chat.session import ChatError
from autoresearch.llm import LLMError, LLMSettings, Provider, has_api_key, make_provider, parse_llm_settings


def chat_provider(campaign: Campaign, model: str | None = None, base_url: str | None = None) -> Provider | None:
    """The provider for plain-language chat, or None when no model is configured."""
    try:
        if model:
            settings = parse_llm_settings(model)
            if base_url:
                settings = LLMSettings(provider=settings.provider, model=settings.model, base_url=base_url)
            return make_provider(settings)
        policy = campaign.policy
        if not (policy.provider and policy.model):
            return None
        keyless = bool(policy.base_url and not policy.api_key_env)
        return make_provider(policy) if keyless or has_api_key(policy) else None
    except (LLMError, ValueError) as exc:
        raise ChatError(f"cannot use the model for chat: {exc}") from None
