"""The transport guard in front of every HTTP app kb-agent serves (the API and MCP over HTTP), as plain ASGI
so it sees every request before any framework does:

- Host header: without authentication only loopback names are accepted (stops DNS rebinding, where a web
  page's own host name resolves to 127.0.0.1 and the browser talks to the local server);
- body size: counted as it arrives, so a chunked body without Content-Length cannot exceed the limit;
- authentication (optional, for apps without their own): a missing or invalid credential is a 401."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.exceptions import HTTPException

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_HOSTS


def host_name(value: str) -> str:
    """`example.com:8765` -> `example.com`; `[::1]:8765` -> `::1`."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class _TooLarge(HTTPException):
    """An HTTPException, so frameworks that wrap body-parsing errors (FastAPI: 400) pass it through as 413."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body larger than {limit:,} bytes")


class HttpGuard:
    def __init__(
        self,
        app,
        *,
        max_body_bytes: int,
        allowed_hosts: frozenset[str] | None = None,
        authenticate: Callable[[dict[str, str]], object] | None = None,
    ):
        """`allowed_hosts=None` accepts any Host; `authenticate(headers)` raises an exception with a `status`."""
        self.app, self.max_body_bytes = app, max_body_bytes
        self.allowed_hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        self.authenticate = authenticate

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.allowed_hosts is not None and host_name(headers.get("host", "")) not in self.allowed_hosts:
            return await reply(
                send,
                403,
                "this server only answers requests addressed to a loopback host name "
                "(Host header refused: DNS-rebinding protection)",
            )
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body_bytes:
            return await reply(send, 413, f"request body larger than {self.max_body_bytes:,} bytes")
        if self.authenticate is not None:
            try:
                self.authenticate(headers)
            except Exception as exc:
                return await reply(send, getattr(exc, "status", 401), str(exc))
        received, started = 0, False

        async def counted_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _TooLarge(self.max_body_bytes)
            return message

        async def tracked_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _TooLarge:
            if not started:
                await reply(send, 413, f"request body larger than {self.max_body_bytes:,} bytes")


async def reply(send, status: int, message: str, *, retry_after: str | None = None) -> None:
    """The documented error body, {"error": {"code", "message"}}, sent before any framework runs."""
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", retry_after.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
