"""A total deadline for one model call, streaming included.

An HTTP read timeout only bounds the silence between two bytes: an endpoint that sends one byte every few
seconds never trips it, and one answer once took 1,447 s. Here the call runs on a daemon thread and the
caller waits at most `seconds` in all; a call past its deadline is abandoned (its thread ends when the
connection does) and reported as an LLMError, which the agent answers with its extractive fallback."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from kb_agent.llm.base import LLMError

T = TypeVar("T")
_DONE = object()


def call_with_deadline(fn: Callable[[], T], seconds: float, what: str) -> T:
    box: queue.Queue = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            box.put((True, fn()))
        except BaseException as exc:
            box.put((False, exc))

    threading.Thread(target=run, name=f"llm-call:{what}", daemon=True).start()
    try:
        ok, value = box.get(timeout=seconds)
    except queue.Empty:
        raise LLMError(f"{what}: no complete reply within {seconds:g}s (KB_AGENT_LLM_TIMEOUT_S)") from None
    if not ok:
        raise value
    return value


def iterate_with_deadline(make: Callable[[], Iterator[str]], seconds: float, what: str) -> Iterator[str]:
    """The pieces `make()` yields, until the whole stream has taken `seconds`; then LLMError."""
    pieces: queue.Queue = queue.Queue()
    stop = threading.Event()

    def run() -> None:
        try:
            for piece in make():
                if stop.is_set():
                    return
                pieces.put((True, piece))
            pieces.put((True, _DONE))
        except BaseException as exc:
            pieces.put((False, exc))

    threading.Thread(target=run, name=f"llm-stream:{what}", daemon=True).start()
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            try:
                ok, piece = pieces.get(timeout=max(left, 0.0))
            except queue.Empty:
                raise LLMError(
                    f"{what}: the reply was not complete within {seconds:g}s (KB_AGENT_LLM_TIMEOUT_S)"
                ) from None
            if not ok:
                raise piece
            if piece is _DONE:
                return
            yield piece
    finally:
        stop.set()
