"""LLM providers: provider-neutral messages, OpenAI and Anthropic on their official SDKs,
retries, usage and cost, the one tool-calling loop (`run_tool_loop`), a scripted model and a fake server for tests and offline demos.

    provider = make_provider("anthropic:claude-sonnet-4-5")        # key from ANTHROPIC_API_KEY
    meter = UsageMeter(max_usd=5.0)
    reply = meter.wrap(provider, node="propose").complete([Message.user("hi")], tools)
"""

from autoresearch.llm.anthropic_provider import AnthropicProvider, anthropic_tool
from autoresearch.llm.errors import BudgetExceeded, LLMError, LLMUnavailable
from autoresearch.llm.fake_server import FakeLLMServer, FakeRequest, Fault, FaultKind, RecordedRequest
from autoresearch.llm.messages import (
    LLMResponse,
    Message,
    Role,
    ModelStopReason,
    ToolCall,
    ToolChoice,
    ToolResult,
    Usage,
)
from autoresearch.llm.openai_provider import OpenAIProvider, openai_tool
from autoresearch.llm.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from autoresearch.llm.provider import Provider, SDKProvider
from autoresearch.llm.retry import RetryPolicy, parse_retry_after
from autoresearch.llm.scripted import Reply, ScriptedProvider
from autoresearch.llm.secrets import redact, register_secret
from autoresearch.llm.settings import LLMSettings, ProviderKind, has_api_key, make_provider, parse_llm_settings
from autoresearch.llm.toolloop import LoopOutcome, run_tool_loop
from autoresearch.llm.usage import (
    CallRecord,
    MeteredProvider,
    UsageMeter,
    UsageReport,
    UsageTotals,
    log_llm_settings,
    log_usage,
)

__all__ = [
    "DEFAULT_PRICES",
    "AnthropicProvider",
    "BudgetExceeded",
    "CallRecord",
    "FakeLLMServer",
    "FakeRequest",
    "Fault",
    "FaultKind",
    "LLMError",
    "LLMResponse",
    "LLMSettings",
    "LLMUnavailable",
    "LoopOutcome",
    "Message",
    "MeteredProvider",
    "ModelPrice",
    "OpenAIProvider",
    "PriceTable",
    "Provider",
    "ProviderKind",
    "RecordedRequest",
    "Reply",
    "RetryPolicy",
    "Role",
    "SDKProvider",
    "ScriptedProvider",
    "ModelStopReason",
    "ToolCall",
    "ToolChoice",
    "ToolResult",
    "Usage",
    "UsageMeter",
    "UsageReport",
    "UsageTotals",
    "anthropic_tool",
    "has_api_key",
    "log_llm_settings",
    "log_usage",
    "make_provider",
    "openai_tool",
    "parse_llm_settings",
    "parse_retry_after",
    "redact",
    "register_secret",
    "run_tool_loop",
]
