"""Fixtures: a fake wire server, and each real SDK provider pointed at it (autoresearch/testing/provider_suite.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from autoresearch.llm import FakeLLMServer, FakeRequest, Reply
from autoresearch.testing.provider_suite import FAST, KEY, Harness

@pytest.fixture(params=["openai", "anthropic"])
def harness(request: pytest.FixtureRequest) -> Iterator[Callable[[Callable[[FakeRequest], Reply]], Harness]]:
    """Call with a script; returns a started Harness for the parametrized provider kind."""
    servers: list[FakeLLMServer] = []

    def build(script: Callable[[FakeRequest], Reply]) -> Harness:
        server = FakeLLMServer(script, api_key=KEY).start()
        servers.append(server)
        return Harness(kind=request.param, server=server)

    yield build
    for server in servers:
        server.stop()


__all__ = ["FAST", "KEY", "Harness", "harness"]
