"""What every route is handed: the engine, the authenticator and the metrics, injected per application,
and the caller's UserContext (authenticated on every request)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from fastapi import Depends, Header, Request
from fastapi.responses import JSONResponse
from prometheus_client import CollectorRegistry, Counter, Histogram

from kb_agent.engine import Engine
from kb_agent.governance.errors import classify
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.auth import Authenticator


@dataclass
class Services:
    engine: Engine
    auth: Authenticator
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    answers: Counter

    @classmethod
    def create(cls, engine: Engine, auth: Authenticator) -> Services:
        registry = CollectorRegistry()  # one per application: tests build many side by side
        return cls(
            engine=engine,
            auth=auth,
            registry=registry,
            requests=Counter("kb_agent_requests_total", "HTTP requests", ["route", "status"], registry=registry),
            latency=Histogram("kb_agent_request_seconds", "Request latency", ["route"], registry=registry),
            answers=Counter("kb_agent_answers_total", "Answers", ["refused"], registry=registry),
        )

    def count_answer(self, refused: bool) -> None:
        self.answers.labels(str(refused).lower()).inc()


def services(request: Request) -> Services:
    return request.app.state.services


def caller(
    svc: Services = Depends(services),
    authorization: str | None = Header(default=None),
    x_api_key: str | None = Header(default=None),
) -> UserContext:
    principal = svc.auth.authenticate(authorization, x_api_key)
    if principal is None:  # --no-auth on loopback: the local owner
        return UserContext.local_owner()
    return svc.engine.identify(principal.user_id, key_admin=principal.admin, claims=principal.claims)


def error(status: int, message: str) -> JSONResponse:
    """The documented error body: {"error": {"code", "message"}}."""
    return JSONResponse({"error": {"code": status, "message": message}}, status_code=status)


def failure(exc: BaseException) -> JSONResponse:
    """The one error map (governance/errors.py): denied 403, limits 429, bad input 4xx, else 500."""
    found = classify(exc)
    return JSONResponse(found.body(), status_code=found.status)


def sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"
