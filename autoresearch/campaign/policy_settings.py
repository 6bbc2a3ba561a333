"""The `policy:` section of the campaign config, and where `kind: auto` is resolved."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator, model_validator

from autoresearch.campaign._base import Section, paths_checked, resolve_path
from autoresearch.campaign.params import located
from autoresearch.campaign.pruner_settings import PrunerSettings


class PolicyKind(str, enum.Enum):
    """What proposes trials: `auto` picks `llm` when a provider and its key are there."""

    auto = "auto"
    optuna = "optuna"
    llm = "llm"


class SamplerKind(str, enum.Enum):
    tpe = "tpe"
    random = "random"
    cmaes = "cmaes"


class ProviderKind(str, enum.Enum):
    openai = "openai"
    anthropic = "anthropic"


_DEFAULT_KEY_ENV = {ProviderKind.openai: "OPENAI_API_KEY", ProviderKind.anthropic: "ANTHROPIC_API_KEY"}


class FallbackKind(str, enum.Enum):
    """What a round does when the model gives no valid proposal (after its retries in the round)."""

    optuna = "optuna"
    """That round's trials are Optuna samples, marked as such; the model is asked again next round."""
    pause = "pause"
    """The campaign pauses with the reason; `autoresearch resume` asks the model again."""
    fail = "fail"
    """The campaign fails with the reason."""


class PolicySettings(Section):
    """Which policy proposes trials, and its settings."""

    kind: PolicyKind = PolicyKind.auto
    """`optuna`, `llm`, or `auto`: llm when a provider is set and its key env var is set."""
    sampler: SamplerKind = SamplerKind.tpe
    """Optuna sampler: `tpe` (multivariate, constant liar), `random` or `cmaes`."""
    pruner: PrunerSettings = Field(default_factory=PrunerSettings)
    """Stops losing trials early from their intermediate metrics: `none`, `median`,
    `successive_halving`, or `{kind, startup_trials: 5, warmup_steps: 0, interval_steps: 1}`."""
    seed: int | None = None
    """Seeds the sampler (reproducible suggestions) and each trial's `{seed}`."""
    provider: ProviderKind | None = None
    """LLM provider: `openai` (or any OpenAI-compatible endpoint) or `anthropic`."""
    model: str | None = None
    """LLM model name."""
    base_url: str | None = None
    """LLM endpoint; default: the provider's."""
    api_key_env: str | None = None
    """Environment variable holding the API key; default OPENAI_API_KEY / ANTHROPIC_API_KEY."""
    max_tool_calls: Annotated[int, Field(ge=1, le=200)] = 20
    """LLM policy: tool calls the model may make in one propose or replan before it must finish."""
    instructions_file: Path | None = None
    """A Markdown file with research instructions for the LLM (relative to the config file)."""
    fallback: FallbackKind = FallbackKind.optuna
    """LLM policy, a round without a valid proposal: `optuna` (that round's trials come from
    Optuna; without a search space, none, and the third such round in a row pauses), `pause` or `fail`."""

    @field_validator("instructions_file")
    @classmethod
    def _resolve_instructions(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        path = resolve_path(value, info, "instructions_file")
        if paths_checked(info) and not path.is_file():
            raise ValueError(f"instructions_file {str(value)!r} not found (looked at {path})")
        return path

    @model_validator(mode="after")
    def _llm_needs_provider(self) -> PolicySettings:
        if self.kind is PolicyKind.llm and self.provider is None:
            raise located(
                ("kind",),
                "kind: llm needs `provider: openai` or `provider: anthropic` (and `model`) in policy; "
                "or use kind: optuna",
            )
        return self

    @property
    def key_env(self) -> str | None:
        """The environment variable holding the provider's API key (None without a provider)."""
        if self.provider is None:
            return None
        return self.api_key_env or _DEFAULT_KEY_ENV[self.provider]


def resolve_policy_kind(policy: PolicySettings, environ: Mapping[str, str] | None = None) -> PolicyKind:
    """`optuna` or `llm`: the one place `kind: auto` is resolved.

    auto -> llm when a provider is configured and its key env var is set (non-empty), else optuna.
    """
    if policy.kind is not PolicyKind.auto:
        return policy.kind
    env = os.environ if environ is None else environ
    if policy.key_env and env.get(policy.key_env):
        return PolicyKind.llm
    return PolicyKind.optuna

