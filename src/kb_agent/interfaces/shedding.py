"""Load shedding in front of the HTTP apps: a bounded number of requests in progress, in total and per
client, so an overload is answered at once (503 / 429 with `Retry-After`) instead of queueing without bound.

A request counts from its first byte until its response (streams included) has been sent. Health and
metrics stay answerable under overload: that is when an operator needs them."""

from __future__ import annotations

import hashlib
import threading

from kb_agent.interfaces.http_guard import reply

EXEMPT = frozenset({"/healthz", "/metrics"})


class LoadShedder:
    def __init__(self, app, *, max_in_flight: int, max_per_client: int, retry_after_s: int = 1):
        self.app, self.max_in_flight, self.max_per_client = app, max_in_flight, max_per_client
        self.retry_after = str(retry_after_s)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.per_client: dict[str, int] = {}
        self.shed = {"503": 0, "429": 0}  # counted for the load benchmark and /metrics-minded operators

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path") in EXEMPT:
            return await self.app(scope, receive, send)
        client = _client_key(scope)
        with self._lock:
            if self.in_flight >= self.max_in_flight:
                verdict = 503
            elif self.per_client.get(client, 0) >= self.max_per_client:
                verdict = 429
            else:
                verdict = 0
                self.in_flight += 1
                self.per_client[client] = self.per_client.get(client, 0) + 1
            if verdict:
                self.shed[str(verdict)] += 1
        if verdict == 503:
            return await reply(
                send, 503, f"the server is at capacity ({self.max_in_flight} requests in progress); retry shortly",
                retry_after=self.retry_after,
            )  # fmt: skip
        if verdict == 429:
            return await reply(
                send, 429, f"too many requests in progress for this client (limit {self.max_per_client})",
                retry_after=self.retry_after,
            )  # fmt: skip
        try:
            await self.app(scope, receive, send)
        finally:
            with self._lock:
                self.in_flight -= 1
                left = self.per_client[client] - 1
                if left:
                    self.per_client[client] = left
                else:
                    del self.per_client[client]


def _client_key(scope) -> str:
    """The credential when there is one (hashed: never kept in memory as given), else the peer address."""
    for name, value in scope.get("headers", []):
        if name.lower() in (b"authorization", b"x-api-key") and value:
            return "cred:" + hashlib.sha256(value).hexdigest()[:16]
    peer = scope.get("client") or ("unknown", 0)
    return f"addr:{peer[0]}"
