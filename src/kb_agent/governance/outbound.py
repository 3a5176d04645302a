"""The one filter every text leaving the product passes through: answers, streamed tokens, search snippets,
file previews, errors - on the CLI, HTTP (JSON, SSE, the OpenAI-compatible stream), MCP and the TUI.

Streams are masked with a look-behind buffer: text is released only up to a whitespace that no possibly
sensitive span crosses and that lies `HOLD` characters behind the newest token, so a card number or a key
split across tokens is masked as a whole. A token marked `boundary` ends a complete, checked sentence: the
text it closes cannot grow any more, so it is released at once (still never inside a sensitive span or
an unterminated key block) - the first sentence of an answer need not wait for 160 more characters."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from kb_agent.governance.masking import mask_text, sensitive_spans

HOLD = 160  # longer than any maskable value that contains whitespace (IBAN, spaced card, `password = x`)
_PEM_BEGIN = "-----BEGIN"


class Outbound:
    def __init__(self, exempt: Iterable[str] = ()):
        self.exempt = frozenset(exempt)
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def text(self, value: str) -> str:
        if not value:
            return value
        masked, counts = mask_text(value, exempt=self.exempt)
        if counts:
            with self._lock:
                for kind, n in counts.items():
                    self.counts[kind] = self.counts.get(kind, 0) + n
        return masked

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-like value (dicts, lists, tuples)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def stream(self) -> StreamMasker:
        return StreamMasker(self)

    def events(self, sink: Callable[[dict], None] | None) -> tuple[Callable[[dict], None], Callable[[], None]]:
        """(emit, flush) for progress events bound for `sink`: tokens through one stream masker, every other
        event's strings through `value`; `flush()` releases the held-back tail at the end of the stream."""
        masker = self.stream()

        def emit(event: dict) -> None:
            if sink is None:
                return
            if event.get("type") == "token":
                boundary = bool(event.get("boundary"))
                if text := masker.feed(event.get("text", ""), boundary=boundary):
                    sink({k: v for k, v in event.items() if k != "boundary"} | {"text": text})
            else:
                sink(self.value(event))

        def flush() -> None:
            if (text := masker.flush()) and sink is not None:
                sink({"type": "token", "text": text})

        return emit, flush


class StreamMasker:
    """Feed raw pieces, get back what is safe to send now; `flush()` at the end of the stream."""

    def __init__(self, outbound: Outbound):
        self._outbound = outbound
        self._pending = ""

    def feed(self, piece: str, *, boundary: bool = False) -> str:
        """`boundary`: `piece` ends a complete sentence, so nothing later can extend what it closes."""
        self._pending += piece
        cut = self._cut(0 if boundary else HOLD)
        if cut <= 0:
            return ""
        released, self._pending = self._pending[:cut], self._pending[cut:]
        return self._outbound.text(released)

    def flush(self) -> str:
        released, self._pending = self._pending, ""
        return self._outbound.text(released)

    def _cut(self, hold: int) -> int:
        text = self._pending
        limit = len(text) - hold
        if limit <= 0:
            return 0
        spans = sensitive_spans(text)
        begin = text.rfind(_PEM_BEGIN)
        if begin != -1 and not any(start <= begin < end for start, end in spans):
            limit = min(limit, begin)  # a private-key block is held until its END line has arrived
        for cut in range(limit, 0, -1):
            if text[cut - 1].isspace() and not any(start < cut < end for start, end in spans):
                return cut
        return 0
