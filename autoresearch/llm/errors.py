"""Errors of the LLM layer. Every message passes through `redact`, so no key leaks."""

from __future__ import annotations

from autoresearch.llm.secrets import redact


class LLMError(Exception):
    """A call to the model failed in a way that retrying will not fix (bad key, bad request).

    `status` is the HTTP status when there was one. The message names the provider and
    model, what went wrong and what to do next; it never contains an API key.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(redact(message))
        self.status = status


class LLMUnavailable(LLMError):
    """The provider stayed unreachable (rate limits, 5xx, timeouts) after every retry.

    The campaign runner catches this and pauses the campaign instead of crashing;
    `retry_after_s` is the server's last hint of when to come back, if it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        attempts: int,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.attempts = attempts
        self.retry_after_s = retry_after_s


class BudgetExceeded(LLMError):
    """The campaign has spent its LLM budget (`budget.max_llm_usd`); no further call is made."""

    def __init__(self, *, spent_usd: float, budget_usd: float) -> None:
        super().__init__(
            f"LLM budget exhausted: spent ${spent_usd:.4f} of max_llm_usd=${budget_usd:.4f}. "
            "No further model call was made. Raise budget.max_llm_usd in the campaign config "
            "and resume the campaign, or let it finish with the Optuna policy."
        )
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd
