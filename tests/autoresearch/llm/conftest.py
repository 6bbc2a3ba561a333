"""Fixtures: a fake wire server, and each real SDK provider pointed at it (the conformance suite)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from autoresearch.llm import (
    AnthropicProvider,
    FakeLLMServer,
    FakeRequest,
    OpenAIProvider,
    PriceTable,
    Reply,
    RetryPolicy,
    SDKProvider,
)

KEY = "sk-test-7f3c9a1e5b2d4c6f8a0b"
"""The key the fake server expects. Shaped like a real one so the pattern redaction is exercised too."""

FAST = RetryPolicy(
    max_attempts=4, initial_wait_s=0.001, max_wait_s=0.01, jitter_s=0.001, max_total_s=60, request_timeout_s=20
)
"""Tiny waits, generous request timeout (2 shared cores)."""


@dataclass
class Harness:
    """One provider kind against one fake server, with a sleep recorder."""

    kind: str
    server: FakeLLMServer
    sleeps: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        time.sleep(seconds)

    def provider(
        self,
        model: str = "test-model",
        *,
        api_key: str = KEY,
        retry: RetryPolicy = FAST,
        prices: PriceTable | None = None,
    ) -> SDKProvider:
        cls = OpenAIProvider if self.kind == "openai" else AnthropicProvider
        url = self.server.openai_base_url if self.kind == "openai" else self.server.anthropic_base_url
        extra = {"prices": prices} if prices is not None else {}
        return cls(
            model, api_key=api_key, base_url=url, api_key_env="TEST_LLM_KEY", retry=retry, sleep=self.sleep, **extra
        )


@pytest.fixture(params=["openai", "anthropic"])
def harness(request: pytest.FixtureRequest) -> Callable[[Callable[[FakeRequest], Reply]], Harness]:
    """Call with a script; returns a started Harness for the parametrized provider kind."""
    servers: list[FakeLLMServer] = []

    def build(script: Callable[[FakeRequest], Reply]) -> Harness:
        server = FakeLLMServer(script, api_key=KEY).start()
        servers.append(server)
        return Harness(kind=request.param, server=server)

    yield build
    for server in servers:
        server.stop()
