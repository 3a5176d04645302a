"""`kb-agent mcp`: the knowledge base as an MCP server (official SDK; stdio or streamable HTTP).

Tools: search_knowledge, read_knowledge, ask - through the engine, so each call is one governed request
(gate, ACL, audit, budget, outbound filter). Over stdio every call runs as one identity (`--as USER`);
over HTTP every request is authenticated like `serve` (API key or JWT) and runs as its caller."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from kb_agent.engine import Engine
from kb_agent.governance.errors import classify
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.http_guard import HttpGuard
from kb_agent.interfaces.shedding import LoadShedder

Identity = Callable[[Mapping[str, str] | None], UserContext]


def create_mcp(engine: Engine, identity: UserContext | Identity, kbs: list[str] | None = None) -> MCPServer:
    resolve: Identity = identity if callable(identity) else (lambda _headers: identity)
    server = MCPServer(
        "kb-agent",
        log_level="WARNING",
        instructions=(  # INFO would log every HTTP request
            "Search and read the company knowledge base. Cite passages as path:Lx-Ly. "
            "Results are limited to what the caller may see."
        ),
    )

    def caller(ctx: Context | None) -> UserContext:
        headers = None
        if ctx is not None:
            try:
                headers = ctx.headers
            except ValueError:  # no request context (in-memory transport)
                headers = None
        return resolve(headers)

    def failed(exc: Exception) -> ValueError:
        return ValueError(classify(exc).message)  # mapped and masked; no traceback reaches the client

    @server.tool(description="Hybrid (BM25 + semantic) search; returns passages with path:Lx-Ly citations.")
    def search_knowledge(query: str, top_k: int = 6, ctx: Context | None = None) -> list[dict]:
        try:
            result = engine.run_tool(
                "hybrid_search", {"query": query, "top_k": max(1, min(top_k, 30))}, user=caller(ctx), kbs=kbs
            )
        except Exception as exc:
            raise failed(exc) from None
        if result.status != "ok":
            raise ValueError(result.error or result.status)
        return [
            {"citation": e.citation, "path": e.path, "start_line": e.start_line, "end_line": e.end_line, "text": e.text}
            for e in result.evidence
        ]

    @server.tool(description="Read lines of an indexed file by its cited path (at most 200 lines).")
    def read_knowledge(
        path: str, start_line: int | None = None, end_line: int | None = None, ctx: Context | None = None
    ) -> dict:
        args = {
            k: v for k, v in {"path": path, "start_line": start_line, "end_line": end_line}.items() if v is not None
        }
        try:
            result = engine.run_tool("read_file", args, user=caller(ctx), kbs=kbs)
        except Exception as exc:
            raise failed(exc) from None
        if result.status != "ok":
            raise ValueError(result.error or result.status)
        item = result.evidence[0]
        return {"citation": item.citation, "text": item.text}

    @server.tool(description="Ask the kb-agent: an answer from the documents with references, or a refusal.")
    def ask(question: str, ctx: Context | None = None) -> dict:
        try:
            answer = engine.answer_query(question, user=caller(ctx), kbs=kbs)
        except Exception as exc:
            raise failed(exc) from None
        return {
            "answer": answer.answer,
            "refused": answer.refused,
            "citations": [c.model_dump() for c in answer.citations],
        }

    return server


def http_identity(engine: Engine, auth: Authenticator | None, fallback: UserContext) -> Identity:
    """Who an HTTP request is: its authenticated principal as the policy knows it (no auth: `fallback`)."""

    def resolve(headers: Mapping[str, str] | None) -> UserContext:
        if auth is None:
            return fallback
        principal = auth.from_headers(headers or {})
        if principal is None:
            raise PermissionError("missing credentials")
        return engine.identify(principal.user_id, key_admin=principal.admin, claims=principal.claims)

    return resolve


def http_app(
    engine: Engine,
    auth: Authenticator | None,
    kbs: list[str] | None,
    *,
    fallback: UserContext,
    max_body_bytes: int,
    allowed_hosts: frozenset[str] | None,
):
    """The streamable-HTTP ASGI app behind the transport guard: every HTTP request is authenticated before
    the SDK sees it (when `auth` is set) and its Host and body size are checked."""
    server = create_mcp(engine, http_identity(engine, auth, fallback), kbs)
    # Host checks are the guard's (the SDK's own would pin Host to loopback even behind authentication)
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    guarded = HttpGuard(
        app,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts,
        authenticate=auth.from_headers if auth is not None else None,
    )
    return LoadShedder(
        guarded,
        max_in_flight=engine.settings.server_max_in_flight,
        max_per_client=engine.settings.server_max_per_client,
    )
