"""Our retry policy for model calls (SDK clients are built with max_retries=0).

Rate limits (429), 408/409, 5xx, timeouts and connection errors are retried with exponential
backoff and jitter, honouring the server's retry-after; attempts and total time are bounded.
When they run out, `LLMUnavailable` tells the runner to pause the campaign. Anything else
becomes an `LLMError` with a message that says what to fix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, UTC
from email.utils import parsedate_to_datetime
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from autoresearch.llm.errors import LLMError, LLMUnavailable
from autoresearch.llm.secrets import redact

log = logging.getLogger("autoresearch.llm")
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class RetryPolicy(BaseModel):
    """How hard to try before declaring the provider unavailable."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(6, ge=1)
    """Attempts per call, the first one included."""
    initial_wait_s: float = Field(1.0, ge=0)
    """Backoff before the second attempt; doubles after each failure."""
    max_wait_s: float = Field(60.0, ge=0)
    """Cap on one backoff (a server's retry-after may ask for longer)."""
    jitter_s: float = Field(1.0, ge=0)
    """Uniform random jitter added to each backoff."""
    max_total_s: float = Field(300.0, gt=0)
    """No attempt starts later than this after the first one."""
    request_timeout_s: float = Field(120.0, gt=0)
    """Timeout of one HTTP request; a timeout counts as a retryable failure."""


class TransientError(Exception):
    """A failure worth retrying: HTTP status (None for timeouts and connection errors) and hint."""

    def __init__(self, message: str, *, status: int | None, retry_after_s: float | None = None) -> None:
        super().__init__(redact(message))
        self.status = status
        self.retry_after_s = retry_after_s


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def classify_sdk_error(
    exc: Exception,
    *,
    status_error: type[Exception],
    connection_error: type[Exception],
    label: str,
    key_env: str | None,
) -> Exception:
    """Map an SDK exception to TransientError (retry) or LLMError (fix something); else `exc`."""
    if isinstance(exc, connection_error):
        return TransientError(f"{type(exc).__name__}: {exc}", status=None)
    if not isinstance(exc, status_error):
        return exc
    status: int = exc.status_code  # type: ignore[attr-defined]
    detail = redact(str(exc))[:500]
    if status in RETRYABLE_STATUS:
        retry_after = parse_retry_after(exc.response.headers)  # type: ignore[attr-defined]
        return TransientError(f"HTTP {status}: {detail}", status=status, retry_after_s=retry_after)
    if status == 401:
        where = f"the environment variable {key_env}" if key_env else "the configured API key"
        hint = f"Check {where} (the key itself is never shown)."
    elif status == 403:
        hint = "The key is valid but lacks access to this model or endpoint."
    elif status == 404:
        hint = "Check `model` and `base_url` in the policy config."
    else:
        hint = "The request was rejected: check the model name and options in the policy config."
    return LLMError(f"{label}: HTTP {status}: {detail}. {hint}", status=status)


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    backoff = wait_exponential_jitter(
        multiplier=policy.initial_wait_s, max=policy.max_wait_s, jitter=policy.jitter_s
    )

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after_s", None) or 0.0
        return max(backoff(state), hint)

    return wait


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    classify: Callable[[Exception], Exception],
    label: str,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Run `attempt` under `policy`; return its result and the number of attempts made."""

    def one() -> T:
        try:
            return attempt()
        except Exception as exc:  # noqa: BLE001 - classified below, unknown ones re-raised as is
            failure = classify(exc)
            if failure is exc:
                raise
            raise failure from None

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            redact(
                f"{label}: {exc}; retrying in {state.upcoming_sleep:.2f}s "
                f"(attempt {state.attempt_number} of {policy.max_attempts})"
            )
        )

    retrying = Retrying(
        stop=stop_after_attempt(policy.max_attempts) | stop_before_delay(policy.max_total_s),
        wait=_wait(policy),
        retry=retry_if_exception_type(TransientError),
        sleep=sleep,
        before_sleep=before_sleep,
    )
    try:
        result = retrying(one)
    except RetryError as err:
        last = err.last_attempt.exception()
        assert isinstance(last, TransientError)
        attempts = err.last_attempt.attempt_number
        elapsed = time.monotonic() - retrying.statistics.get("start_time", time.monotonic())
        status = f"HTTP {last.status}" if last.status else "no HTTP status"
        hint = f" The server asked to wait {last.retry_after_s:.0f}s." if last.retry_after_s else ""
        raise LLMUnavailable(
            f"{label} is unavailable: {attempts} attempt(s) over {elapsed:.1f}s failed, the last with "
            f"{status} ({last}).{hint} The campaign will pause rather than fail; once the provider is "
            "reachable again, resume it with `autoresearch resume <campaign>`.",
            status=last.status,
            attempts=attempts,
            retry_after_s=last.retry_after_s,
        ) from None
    return result, retrying.statistics.get("attempt_number", 1)
