"""The provider suite (autoresearch/testing/provider_suite.py) on OpenAIProvider and AnthropicProvider."""

from autoresearch.testing.provider_suite import *  # noqa: F403  (the suite's test functions)
