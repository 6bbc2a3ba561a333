"""Token use and cost per call, per graph node and per campaign; the LLM budget; logging it to a tracker.

`UsageMeter` accumulates; `MeteredProvider` wraps any Provider so every call is checked
against the budget first and recorded after. A resumed campaign starts its meter from the
report it saved, so the budget spans restarts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from autoresearch.llm.errors import BudgetExceeded
from autoresearch.llm.messages import LLMResponse, Message, ToolChoice
from autoresearch.llm.provider import Provider
from autoresearch.llm.secrets import redact
from autoresearch.llm.settings import LLMSettings
from skills.tooldef import ToolDef
from tracking import CALL_FIELDS, Tracker, log_llm_params, log_llm_usage


class CallRecord(BaseModel):
    """One model call as the meter saw it."""

    model_config = ConfigDict(frozen=True)

    node: str
    """The graph node that made the call (propose, replan, ...); "" when not given."""
    model: str
    """The model that answered."""
    input_tokens: int
    """Prompt tokens."""
    output_tokens: int
    """Completion tokens."""
    cost_usd: float
    """Cost from the price table (0 when unknown)."""
    price_known: bool
    """False when the model had no price, so the budget could not see this call's cost."""
    latency_s: float
    """Wall time of the successful attempt."""
    attempts: int
    """HTTP attempts, retries included."""


class UsageTotals(BaseModel):
    """Sums over a set of calls."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    """Number of calls."""
    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""
    cost_usd: float = 0.0
    """Known cost in USD."""
    unknown_price_calls: int = 0
    """Calls whose model had no price (their cost is missing from `cost_usd`)."""

    def plus(self, call: CallRecord) -> UsageTotals:
        return UsageTotals(
            calls=self.calls + 1,
            input_tokens=self.input_tokens + call.input_tokens,
            output_tokens=self.output_tokens + call.output_tokens,
            cost_usd=self.cost_usd + call.cost_usd,
            unknown_price_calls=self.unknown_price_calls + (0 if call.price_known else 1),
        )


class UsageReport(BaseModel):
    """Everything a meter has counted: save it with the campaign to carry it across a resume."""

    model_config = ConfigDict(frozen=True)

    total: UsageTotals = UsageTotals()
    """The whole campaign."""
    by_node: dict[str, UsageTotals] = {}
    """Per graph node label."""
    by_model: dict[str, UsageTotals] = {}
    """Per model name."""


class UsageMeter:
    """Counts calls and enforces `max_usd` (None: no budget). Thread-safe."""

    def __init__(self, max_usd: float | None = None, *, start: UsageReport | None = None) -> None:
        self.max_usd = max_usd
        self._report = start or UsageReport()
        self._calls: list[CallRecord] = []
        self._flushed = 0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        return self._report.total.cost_usd

    def report(self) -> UsageReport:
        return self._report

    def calls(self) -> list[CallRecord]:
        """Calls recorded by this meter (not those of a previous run carried in `start`)."""
        with self._lock:
            return list(self._calls)

    def check_budget(self) -> None:
        """Raise BudgetExceeded when the spend has reached `max_usd`."""
        if self.max_usd is not None and self.spent_usd >= self.max_usd:
            raise BudgetExceeded(spent_usd=self.spent_usd, budget_usd=self.max_usd)

    def record(self, response: LLMResponse, *, node: str = "") -> CallRecord:
        u = response.usage
        call = CallRecord(
            node=node,
            model=response.model,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cost_usd=u.cost_usd,
            price_known=u.price_known,
            latency_s=response.latency_s,
            attempts=response.attempts,
        )
        with self._lock:
            r = self._report
            self._report = UsageReport(
                total=r.total.plus(call),
                by_node={**r.by_node, node: r.by_node.get(node, UsageTotals()).plus(call)},
                by_model={**r.by_model, call.model: r.by_model.get(call.model, UsageTotals()).plus(call)},
            )
            self._calls.append(call)
        return call

    def unflushed(self) -> list[tuple[int, CallRecord]]:
        """(index, call) for the calls not yet logged; `mark_flushed` once they are."""
        with self._lock:
            return list(enumerate(self._calls[self._flushed :], start=self._flushed))

    def mark_flushed(self, count: int) -> None:
        """Record that the first `count` calls have been logged."""
        with self._lock:
            self._flushed = max(self._flushed, count)

    def wrap(self, provider: Provider, node: str = "") -> MeteredProvider:
        return MeteredProvider(provider, self, node=node)


class MeteredProvider:
    """A Provider that checks the budget before each call and records its usage after."""

    def __init__(self, inner: Provider, meter: UsageMeter, *, node: str = "") -> None:
        self.inner = inner
        self.meter = meter
        self.node = node
        self.model = inner.model

    def __repr__(self) -> str:
        return f"MeteredProvider({self.inner!r}, node={self.node!r})"

    def with_node(self, node: str) -> MeteredProvider:
        """The same provider and meter, recording calls under another node label."""
        return MeteredProvider(self.inner, self.meter, node=node)

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        *,
        tool_choice: ToolChoice = ToolChoice.AUTO,
        max_tokens: int = 4096,
    ) -> LLMResponse:
        self.meter.check_budget()
        response = self.inner.complete(messages, tools, tool_choice=tool_choice, max_tokens=max_tokens)
        self.meter.record(response, node=self.node)
        return response


def log_usage(tracker: Tracker, run_id: str, meter: UsageMeter) -> int:
    """Log the calls not logged before and the running totals (campaign and per node) to run
    `run_id`, in one batch (names: `tracking.usage`). Returns the number of new calls logged;
    calls whose write failed are logged again next time."""
    fresh = meter.unflushed()
    report = meter.report()
    log_llm_usage(
        tracker, run_id,
        calls=[(index, call.model_dump(include=set(CALL_FIELDS))) for index, call in fresh],
        totals=report.total.model_dump(),
        by_node={node: totals.model_dump() for node, totals in report.by_node.items()},
        step=report.total.calls,
    )  # fmt: skip
    if fresh:
        meter.mark_flushed(fresh[-1][0] + 1)
    return len(fresh)


def log_llm_settings(tracker: Tracker, run_id: str, settings: LLMSettings) -> None:
    """Log which model the policy uses: provider, model, base_url and the key's *variable name*."""
    values = {
        "provider": settings.provider.value,
        "model": settings.model,
        "base_url": settings.base_url or "",
        "api_key_env": settings.key_env(),
    }
    log_llm_params(tracker, run_id, {k: redact(v) for k, v in values.items()})
