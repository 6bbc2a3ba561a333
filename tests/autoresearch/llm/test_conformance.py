"""The provider suite (autoresearch/testing/provider_suite.py) on OpenAIProvider and AnthropicProvider."""

from autoresearch.testing.provider_suite import ProviderSuite


class TestProvider(ProviderSuite):
    pass
