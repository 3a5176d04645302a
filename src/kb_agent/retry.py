"""The one retry policy for outbound HTTP (connectors, embedding endpoints; the chat API uses the OpenAI
SDK's own retries with the same statuses): a few attempts, exponential backoff, `Retry-After` honoured,
and a wait longer than the caller can afford reported at once instead of blocking a question.

Built on tenacity; callers raise `RetryableStatus` for a response worth another try."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import TypeVar

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})  # the statuses the OpenAI SDK retries too
# a Jira/Confluence 500 is usually a query the server cannot answer (it answers the same way again):
# reported at once rather than retried while a question waits
GATEWAY_STATUSES = frozenset({429, 502, 503, 504})
T = TypeVar("T")


class RetryableStatus(Exception):
    """A response whose status says "try again" (kept, so the last one can be reported as it was)."""

    def __init__(self, response: httpx.Response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _asked_wait(state: RetryCallState) -> float | None:
    exc = state.outcome.exception() if state.outcome is not None else None
    if isinstance(exc, RetryableStatus):
        return retry_after(exc.response.headers.get("Retry-After"))
    return None


def call_with_retries(fn: Callable[[], T], *, attempts: int, max_wait_s: float = 30.0, backoff_s: float = 1.0) -> T:
    """Run `fn` until it returns, at most `attempts` times, on httpx errors and `RetryableStatus`.

    The last exception is re-raised as it was; so is one whose Retry-After asks for more than `max_wait_s`."""
    backoff = wait_exponential(multiplier=backoff_s, max=max_wait_s)

    def wait(state: RetryCallState) -> float:
        asked = _asked_wait(state)
        return asked if asked is not None else backoff(state)

    def stop(state: RetryCallState) -> bool:
        asked = _asked_wait(state)
        return state.attempt_number >= attempts or (asked is not None and asked > max_wait_s)

    retrying = Retrying(
        stop=stop if attempts > 1 else stop_after_attempt(1),
        wait=wait,
        retry=retry_if_exception_type((httpx.HTTPError, RetryableStatus)),
        reraise=True,
    )
    return retrying(fn)
