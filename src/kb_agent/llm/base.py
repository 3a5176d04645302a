"""The one LLM interface the agent uses, whatever runs underneath.

Backends implement `_complete` (and optionally `_stream`); this base adds usage accounting, tolerant
structured output (JSON extraction, one repair retry, a logged fallback - never an exception into the
graph), and a thread-safe usage log.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

log = logging.getLogger("kb_agent.llm")
Message = dict[str, Any]
T = TypeVar("T", bound=BaseModel)


class LLMError(RuntimeError):
    """The backend failed (unreachable, timed out, refused) after its retries."""


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: list[dict] = field(default_factory=list)


@dataclass
class CallRecord:
    model: str
    purpose: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    ok: bool


class LLM:
    """Subclasses set `model` and implement `_complete(messages, **options) -> Completion`."""

    model: str = "unknown"
    supports_tools: bool = False
    # a backend that honours a `deadline_s` option by abandoning the call (a remote endpoint); an in-process
    # model does not (an abandoned generation would keep the cores busy): it is bounded by max_tokens instead
    abandonable: bool = False

    def __init__(self) -> None:
        self.calls: list[CallRecord] = []
        self._lock = threading.Lock()

    # -- backend hooks --------------------------------------------------------------------------------
    def _complete(self, messages: list[Message], **options) -> Completion:  # pragma: no cover - abstract
        raise NotImplementedError

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        yield self._complete(messages, **options).text  # backends without streaming emit one piece

    # -- accounting -----------------------------------------------------------------------------------
    def _record(self, purpose: str, started: float, completion: Completion | None) -> None:
        with self._lock:
            self.calls.append(
                CallRecord(
                    model=self.model,
                    purpose=purpose,
                    prompt_tokens=completion.prompt_tokens if completion else 0,
                    completion_tokens=completion.completion_tokens if completion else 0,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    ok=completion is not None,
                )
            )

    # -- public ---------------------------------------------------------------------------------------
    def chat(self, messages: list[Message], *, purpose: str = "chat", **options) -> str:
        return self.complete(messages, purpose=purpose, **options).text

    def complete(self, messages: list[Message], *, purpose: str = "chat", **options) -> Completion:
        started = time.perf_counter()
        try:
            completion = self._complete(messages, **options)
        except Exception:
            self._record(purpose, started, None)
            raise
        self._record(purpose, started, completion)
        return completion

    def stream(self, messages: list[Message], *, purpose: str = "chat", **options) -> Iterator[str]:
        started = time.perf_counter()
        pieces: list[str] = []
        ok = False
        try:
            for piece in self._stream(messages, **options):
                pieces.append(piece)
                yield piece
            ok = True
        finally:
            text = "".join(pieces)
            estimate = Completion(text, _estimate_tokens(messages), max(1, len(text) // 4)) if ok else None
            self._record(purpose, started, estimate)

    def structured(
        self, messages: list[Message], schema: type[T], *, fallback: T, purpose: str = "structured", **options
    ) -> tuple[T, bool]:
        """A validated `schema` object and whether it came from the model (False = the fallback).

        One repair retry shows the model its invalid reply and the validation error.
        """
        attempt_messages = list(messages)
        for attempt in range(2):
            try:
                text = self.chat(
                    attempt_messages,
                    purpose=purpose if attempt == 0 else f"{purpose}:repair",
                    json_schema=schema.model_json_schema(),
                    **options,
                )
            except LLMError as exc:
                log.warning("%s: LLM call failed (%s); using fallback", purpose, exc)
                return fallback, False
            try:
                return schema.model_validate(extract_json(text)), True
            except (ValueError, ValidationError) as exc:
                log.info("%s: invalid structured reply (%s)", purpose, str(exc)[:200])
                attempt_messages = [
                    *messages,
                    {"role": "assistant", "content": text[:2000]},
                    {
                        "role": "user",
                        "content": f"That reply was not valid JSON for the schema ({str(exc)[:300]}). "
                        "Reply with the JSON object only.",
                    },
                ]
        log.warning("%s: no valid structured reply after a repair retry; using fallback", purpose)
        return fallback, False

    def usage(self) -> dict:
        with self._lock:
            calls = list(self.calls)
        return {
            "calls": len(calls),
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
        }


def metered(*llms: LLM | None) -> list[LLM]:
    """Each model once (one may serve several roles): whose usage a question's calls are counted from."""
    return list({id(m): m for m in llms if m is not None}.values())


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def extract_json(text: str) -> Any:
    """The first JSON object/array in a reply: bare, fenced, or surrounded by prose."""
    text = text.strip()
    candidates = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text[index:])[0]
            except ValueError:
                continue
    raise ValueError("no JSON object in the reply")


def _estimate_tokens(messages: list[Message]) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


class MeteredLLM(LLM):
    """A per-query view of a shared backend: same model, its own call log (for Answer.llm_calls)."""

    def __init__(self, inner: LLM, *, deadline: float | None = None):
        """`deadline` (time.monotonic()): the answer's circuit breaker also cuts a call in progress."""
        super().__init__()
        self.inner = inner
        self.model = inner.model
        self.supports_tools = inner.supports_tools
        self.deadline = deadline if inner.abandonable else None

    def _left(self) -> float:
        assert self.deadline is not None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LLMError("the answer's time budget (KB_AGENT_MAX_ANSWER_SECONDS) is spent")
        return left

    def _with_deadline(self, options: dict) -> dict:
        """The backend's own deadline mechanism cuts the call at the answer's budget too (one watchdog)."""
        return options if self.deadline is None else {**options, "deadline_s": self._left()}

    def _complete(self, messages: list[Message], **options) -> Completion:
        return self.inner._complete(messages, **self._with_deadline(options))

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        return self.inner._stream(messages, **self._with_deadline(options))
