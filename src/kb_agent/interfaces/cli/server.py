"""`kb-agent serve`, `hash-key` and `mcp`: the network faces of the engine."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer

from kb_agent.interfaces.cli.app import app, err, fail, open_engine, require_extra


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8765,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="Local single-user use without keys (127.0.0.1 only).")
    ] = False,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Server processes (KB_AGENT_STORE=postgres only).")
    ] = 1,
) -> None:
    """HTTP API with SSE streaming, an OpenAI-compatible /v1/chat/completions and the web UI at /."""
    for module in ("fastapi", "uvicorn", "prometheus_client", "jwt"):
        require_extra(module, "server", "serve")
    import uvicorn

    from kb_agent.interfaces.http_guard import is_loopback

    engine = open_engine()
    settings = engine.settings
    auth = _authenticator(settings, anonymous=no_auth)
    if not auth.configured and not no_auth:
        fail(
            "no authentication configured: set KB_AGENT_API_KEYS_FILE or KB_AGENT_JWT_SECRET, "
            "or pass --no-auth for local single-user use",
            2,
        )
    if no_auth and not is_loopback(host):
        fail("--no-auth is only allowed on a loopback address", 2)
    if workers > 1 and settings.store != "postgres":
        fail(
            "--workers needs a shared store: the embedded store serves from one process "
            "(set KB_AGENT_STORE=postgres; see README, Scaling out)",
            2,
        )
    err.print(
        f"kb-agent serving on http://{host}:{port} (docs at /docs)" + (f", {workers} workers" if workers > 1 else "")
    )
    if workers > 1:  # each worker process builds its own engine from the same settings and options
        engine.close()
        os.environ[_WORKER_OPTIONS] = json.dumps({"no_auth": no_auth})
        uvicorn.run(f"{__name__}:worker_app", factory=True, host=host, port=port, workers=workers, log_level="warning")
        return
    uvicorn.run(_app(engine, auth, no_auth), host=host, port=port, log_level="warning")


_WORKER_OPTIONS = "KB_AGENT_SERVE_WORKER_OPTIONS"  # set by `serve --workers`, read in each worker


def _app(engine, auth, no_auth: bool):
    from kb_agent.interfaces.http_guard import LOOPBACK_HOSTS
    from kb_agent.interfaces.server import create_app

    settings = engine.settings
    # without authentication only loopback Host headers are answered (DNS rebinding)
    return create_app(
        engine,
        auth,
        cors_origins=settings.cors_origins,
        max_body_bytes=settings.server_max_body_bytes,
        allowed_hosts=LOOPBACK_HOSTS if no_auth else _allowed_hosts(settings),
    )


def worker_app():
    """One `serve --workers` process: the same app over the shared PostgreSQL store."""
    no_auth = json.loads(os.environ.get(_WORKER_OPTIONS, "{}")).get("no_auth", False)
    engine = open_engine()
    return _app(engine, _authenticator(engine.settings, anonymous=no_auth), no_auth)


def _authenticator(settings, *, anonymous: bool = False):
    from kb_agent.interfaces.auth import Authenticator

    try:
        return Authenticator(settings.api_keys_file, settings.jwt_secret, allow_anonymous=anonymous)
    except (OSError, ValueError) as exc:
        fail(f"configuration error: server authentication settings: {exc}", 2)


def _allowed_hosts(settings) -> frozenset[str] | None:
    return frozenset(settings.allowed_hosts) if settings.allowed_hosts else None


@app.command("hash-key")
def hash_key_command(
    key: Annotated[str, typer.Argument(help="An API key to store in KB_AGENT_API_KEYS_FILE.")],
) -> None:
    """Print the sha256 form of an API key, for the keys file (the plain key then never sits on disk)."""
    from kb_agent.interfaces.auth import hash_key

    print(hash_key(key))


@app.command()
def mcp(
    transport: Annotated[str, typer.Option("--transport", help="stdio | http (streamable HTTP)")] = "stdio",
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8766,
    as_user: Annotated[
        str | None,
        typer.Option("--as", envvar="KB_AGENT_MCP_USER", help="stdio: identity every call runs as (policy user)."),
    ] = None,
    kb: Annotated[list[str] | None, typer.Option("--kb", help="Knowledge base(s) to serve.")] = None,
) -> None:
    """Serve search_knowledge / read_knowledge / ask over MCP: stdio for desktop clients (one identity), or
    streamable HTTP authenticated like `serve` (API keys / JWT; each call runs as its caller)."""
    for module in ("mcp", "uvicorn", "jwt", "fastapi"):
        require_extra(module, "mcp", "mcp")
    from kb_agent.interfaces.http_guard import LOOPBACK_HOSTS, is_loopback
    from kb_agent.interfaces.mcp_server import create_mcp, http_app

    if transport not in ("stdio", "http"):
        fail("--transport takes stdio or http", 2)
    engine = open_engine()
    if transport == "stdio":
        create_mcp(engine, engine.identify(as_user), kb).run("stdio")
        return
    import uvicorn

    auth = _authenticator(engine.settings)
    if not auth.configured and not is_loopback(host):
        fail("MCP over HTTP without KB_AGENT_API_KEYS_FILE or KB_AGENT_JWT_SECRET only binds a loopback address", 2)
    who = "callers' own identities" if auth.configured else f"{engine.identify(as_user).user_id} (no auth, loopback)"
    err.print(f"kb-agent MCP (streamable HTTP) on http://{host}:{port}/mcp as {who}")
    uvicorn.run(
        http_app(
            engine,
            auth if auth.configured else None,
            kb,
            fallback=engine.identify(as_user),
            max_body_bytes=engine.settings.server_max_body_bytes,
            allowed_hosts=_allowed_hosts(engine.settings) if auth.configured else LOOPBACK_HOSTS,
        ),
        host=host,
        port=port,
        log_level="warning",
    )
