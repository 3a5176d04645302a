"""The one retry policy (kb_agent/retry.py) that connectors and embedding endpoints share."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kb_agent.retry import RetryableStatus, call_with_retries, retry_after

SRC = Path(__file__).resolve().parents[1] / "src" / "kb_agent"


@pytest.fixture
def waits(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", slept.append)
    return slept


def _busy(status=503, after=None):
    headers = {"Retry-After": after} if after is not None else {}
    return RetryableStatus(httpx.Response(status, headers=headers))


def test_retries_then_returns(waits):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise _busy()
        return "ok"

    assert call_with_retries(flaky, attempts=3, backoff_s=1.0) == "ok"
    assert len(calls) == 3 and waits == [1.0, 2.0]  # exponential backoff


def test_the_last_response_comes_back_when_attempts_run_out(waits):
    def always_busy():
        raise _busy(429)

    with pytest.raises(RetryableStatus) as caught:
        call_with_retries(always_busy, attempts=2)
    assert caught.value.response.status_code == 429 and len(waits) == 1


def test_retry_after_is_honoured_and_a_long_one_is_not_waited_for(waits):
    calls = []

    def asks_two_seconds():
        calls.append(1)
        if len(calls) == 1:
            raise _busy(429, "2")
        return "ok"

    assert call_with_retries(asks_two_seconds, attempts=3) == "ok" and waits == [2.0]
    waits.clear()
    calls.clear()

    def asks_an_hour():
        calls.append(1)
        raise _busy(429, "3600")

    with pytest.raises(RetryableStatus):
        call_with_retries(asks_an_hour, attempts=5, max_wait_s=30)
    assert len(calls) == 1 and waits == []  # reported at once, the question is not blocked


def test_transport_errors_are_retried_other_errors_are_not(waits):
    calls = []

    def unreachable():
        calls.append(1)
        raise httpx.ConnectError("refused")

    with pytest.raises(httpx.ConnectError):
        call_with_retries(unreachable, attempts=3)
    assert len(calls) == 3
    calls.clear()

    def broken():
        calls.append(1)
        raise ValueError("a bug, not a network fault")

    with pytest.raises(ValueError):
        call_with_retries(broken, attempts=3)
    assert len(calls) == 1


def test_retry_after_parses_seconds_and_dates():
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait


def test_no_hand_written_retry_loop_is_left():
    """Connectors and embedders go through call_with_retries; only the LLM's JSON-repair retry loops."""
    loops = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if "for attempt in range" in p.read_text(encoding="utf-8") and p.name != "base.py"
    ]
    assert loops == []
