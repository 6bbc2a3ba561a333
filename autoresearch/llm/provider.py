"""The `Provider` seam, and the retrying SDK-backed base both real providers share.

Rules every provider keeps:
- `complete` is one model turn: messages in, one assistant message out. No hidden state
  between calls; the caller owns the conversation.
- Errors are `LLMUnavailable` (retries exhausted: pause the campaign), `LLMError` (fix the
  config) or `BudgetExceeded`; an SDK exception never escapes, and no message holds a key.
- Malformed tool arguments come back as a ToolCall with `parse_error`, never an exception.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from autoresearch.llm.messages import LLMResponse, Message, ModelStopReason, ToolChoice
from autoresearch.llm.pricing import DEFAULT_PRICES, PriceTable
from autoresearch.llm.retry import RetryPolicy, call_with_retries, classify_sdk_error
from autoresearch.llm.secrets import redact, register_secret
from skills.tooldef import ToolDef


@runtime_checkable
class Provider(Protocol):
    """Something that answers one model turn, optionally calling tools."""

    model: str
    """The model name requests are made with."""

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        *,
        tool_choice: ToolChoice = ToolChoice.AUTO,
        max_tokens: int = 4096,
    ) -> LLMResponse: ...


def check_tool_choice(tools: Sequence[ToolDef], tool_choice: ToolChoice) -> None:
    if tool_choice is ToolChoice.REQUIRED and not tools:
        raise ValueError("tool_choice=required needs at least one tool; pass tools or use auto")


class SDKProvider(ABC):
    """Shared body of the SDK providers: client set-up, retries, timing, pricing, repr.

    A subclass sets `kind` and the SDK's error classes, and implements `_client_for`
    (build the SDK client), `_send` (one request) and `_parse` (SDK response -> neutral).
    """

    kind: str = ""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        retry: RetryPolicy = RetryPolicy(),
        prices: PriceTable = DEFAULT_PRICES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        register_secret(api_key)
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self._retry = retry
        self._prices = prices
        self._sleep = sleep
        self._client, self._status_error, self._connection_error = self._client_for(api_key)

    def __repr__(self) -> str:
        base = redact(self.base_url) if self.base_url else None
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={base!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.model}"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        *,
        tool_choice: ToolChoice = ToolChoice.AUTO,
        max_tokens: int = 4096,
    ) -> LLMResponse:
        check_tool_choice(tools, tool_choice)

        def attempt() -> tuple[Any, float]:
            start = time.monotonic()
            raw = self._send(list(messages), list(tools), tool_choice, max_tokens)
            return raw, time.monotonic() - start

        (raw, latency), attempts = call_with_retries(
            attempt, self._retry, classify=self._classify, label=self.label, sleep=self._sleep
        )
        message, stop, model, input_tokens, output_tokens = self._parse(raw)
        return LLMResponse(
            message=message,
            stop_reason=stop,
            usage=self._prices.usage(model, input_tokens, output_tokens),
            model=model,
            latency_s=latency,
            attempts=attempts,
        )

    def _classify(self, exc: Exception) -> Exception:
        return classify_sdk_error(
            exc,
            status_error=self._status_error,
            connection_error=self._connection_error,
            label=self.label,
            key_env=self.api_key_env,
        )

    @abstractmethod
    def _client_for(self, api_key: str) -> tuple[Any, type[Exception], type[Exception]]:
        """The SDK client (max_retries=0) and the SDK's status and connection error classes."""

    @abstractmethod
    def _send(
        self, messages: list[Message], tools: list[ToolDef], tool_choice: ToolChoice, max_tokens: int
    ) -> Any:
        """One request through the SDK; its exceptions are classified by the caller."""

    @abstractmethod
    def _parse(self, raw: Any) -> tuple[Message, ModelStopReason, str, int, int]:
        """(assistant message, stop reason, model, input tokens, output tokens)."""
