"""The FastAPI application: the transport guard, metrics, the one error map, and the routers."""

from __future__ import annotations

import time

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException

from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.http_guard import HttpGuard
from kb_agent.interfaces.server import admin, openai, query, search, sources
from kb_agent.interfaces.server.deps import Services, error, failure
from kb_agent.interfaces.shedding import LoadShedder


def create_app(
    engine: Engine,
    auth: Authenticator,
    *,
    cors_origins: list[str] | None = None,
    max_body_bytes: int = 1_000_000,
    allowed_hosts: frozenset[str] | None = None,
    max_in_flight: int | None = None,
    max_per_client: int | None = None,
) -> FastAPI:
    """`allowed_hosts`: Host names this server answers (None = any). `serve` passes the loopback names when it
    runs without authentication. `max_in_flight` / `max_per_client`: load-shedding limits (default: settings)."""
    app = FastAPI(
        title="kb-agent",
        version="0.1.0",
        description="Answers from your documents with path:line citations, under your access policy.",
    )
    app.state.services = svc = Services.create(engine, auth)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key"],
        )
    app.add_middleware(HttpGuard, max_body_bytes=max_body_bytes, allowed_hosts=allowed_hosts)
    app.add_middleware(  # outermost: an overload is answered before any other work
        LoadShedder,
        max_in_flight=max_in_flight or engine.settings.server_max_in_flight,
        max_per_client=max_per_client or engine.settings.server_max_per_client,
    )

    @app.middleware("http")
    async def metrics_middleware(request: Request, call_next):
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        name = getattr(route, "path", "unmatched")
        svc.requests.labels(name, str(response.status_code)).inc()
        svc.latency.labels(name).observe(time.perf_counter() - started)
        return response

    # the concrete classes keep Starlette from re-raising after the response, which it does for a bare
    # Exception handler
    for kind in (PermissionError, ValueError, LookupError, RuntimeError, OSError, Exception):
        app.add_exception_handler(kind, lambda _, exc: failure(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}" for e in exc.errors())
        return error(422, f"invalid request: {problems}"[:2000])

    @app.exception_handler(StarletteHTTPException)
    async def _http(_, exc: StarletteHTTPException):
        return error(exc.status_code, str(exc.detail))

    for module in (admin, query, search, sources, openai):
        # flat, not include_router: this FastAPI keeps an included router as one opaque entry, and the
        # entry-point registry (tests/test_entry_points.py) must see every route in app.routes
        app.router.routes.extend(module.router.routes)
    return app
