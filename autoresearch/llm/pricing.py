"""What tokens cost: a price table per model, overridable from the campaign config.

Prices are list prices in USD per million tokens as published by OpenAI and Anthropic in
late 2025; they change, so a campaign can override or add entries (`with_overrides`).
A model missing from the table costs 0 and is flagged `price_known=False`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from autoresearch.llm.messages import Usage

# A dated snapshot or alias of a listed model: "claude-sonnet-4-5-20250929",
# "gpt-4.1-mini-2025-04-14", "claude-3-7-sonnet-latest".
_SNAPSHOT_SUFFIX = re.compile(r"^(\d{4}-?\d{2}-?\d{2}|latest)$")


class ModelPrice(BaseModel):
    """USD per one million tokens."""

    model_config = ConfigDict(frozen=True)

    input_per_mtok: float
    """Price of one million input (prompt) tokens."""
    output_per_mtok: float
    """Price of one million output (completion) tokens."""


class PriceTable(BaseModel):
    """Model name -> price. Lookup accepts dated snapshots of a listed model."""

    model_config = ConfigDict(frozen=True)

    prices: dict[str, ModelPrice]
    """Keyed by model name without a date suffix (e.g. `gpt-4.1-mini`)."""

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of `model`, or of the listed model it is a dated snapshot of; None if unknown."""
        if model in self.prices:
            return self.prices[model]
        for name in sorted(self.prices, key=len, reverse=True):
            if model.startswith(name + "-") and _SNAPSHOT_SUFFIX.match(model[len(name) + 1 :]):
                return self.prices[name]
        return None

    def usage(self, model: str, input_tokens: int, output_tokens: int) -> Usage:
        """A Usage record with the cost of these tokens (0 and `price_known=False` if unknown)."""
        price = self.lookup(model)
        if price is None:
            return Usage(input_tokens=input_tokens, output_tokens=output_tokens, price_known=False)
        cost = (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6
        return Usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost)

    def with_overrides(self, overrides: dict[str, ModelPrice | dict[str, float]]) -> PriceTable:
        """A new table with these entries added or replaced."""
        extra = {k: ModelPrice.model_validate(v) for k, v in overrides.items()}
        return PriceTable(prices={**self.prices, **extra})


def _p(inp: float, out: float) -> ModelPrice:
    return ModelPrice(input_per_mtok=inp, output_per_mtok=out)


DEFAULT_PRICES = PriceTable(
    prices={
        "gpt-5": _p(1.25, 10.0),
        "gpt-5-mini": _p(0.25, 2.0),
        "gpt-5-nano": _p(0.05, 0.40),
        "gpt-4.1": _p(2.0, 8.0),
        "gpt-4.1-mini": _p(0.40, 1.60),
        "gpt-4.1-nano": _p(0.10, 0.40),
        "gpt-4o": _p(2.50, 10.0),
        "gpt-4o-mini": _p(0.15, 0.60),
        "o3": _p(2.0, 8.0),
        "o4-mini": _p(1.10, 4.40),
        "claude-opus-4-5": _p(5.0, 25.0),
        "claude-opus-4-1": _p(15.0, 75.0),
        "claude-opus-4": _p(15.0, 75.0),
        "claude-sonnet-4-5": _p(3.0, 15.0),
        "claude-sonnet-4": _p(3.0, 15.0),
        "claude-3-7-sonnet": _p(3.0, 15.0),
        "claude-haiku-4-5": _p(1.0, 5.0),
        "claude-3-5-haiku": _p(0.80, 4.0),
    }
)
"""List prices (USD per 1M tokens, late 2025). Override per campaign; they go stale."""
