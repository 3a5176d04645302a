"""`kb-agent serve`: the HTTP API (FastAPI). Every request is authenticated, mapped to the policy's
UserContext and passes the same gate as the CLI; answers stream over SSE; an OpenAI-compatible
/v1/chat/completions lets any OpenAI client or chat UI talk to kb-agent."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from fastapi import Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from kb_agent.engine import Engine
from kb_agent.governance.errors import classify
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.http_guard import HttpGuard

STATIC = Path(__file__).parent / "web"


class QueryRequest(BaseModel):
    question: str = Field(min_length=1, max_length=4000)
    kbs: list[str] | None = None
    history: list[dict] = Field(default_factory=list, max_length=40)


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=1000)
    kbs: list[str] | None = None
    mode: str = Field(default="hybrid", pattern="^(hybrid|bm25|dense|grep)$")
    k: int = Field(default=10, ge=1, le=100)
    hops: int = Field(default=1, ge=1, le=2)


class IndexRequest(BaseModel):
    paths: list[str] = Field(min_length=1, max_length=50)
    kb: str | None = None
    acl: list[str] | None = None


class ChatMessage(BaseModel):
    role: str
    content: str | list | None = ""


class ChatRequest(BaseModel):
    model: str = "kb-agent"
    messages: list[ChatMessage] = Field(min_length=1, max_length=100)
    stream: bool = False
    kb_mode: bool = Field(default=True, description="false = plain chat with the model, no documents")


def _text(content) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "message": message}}, status_code=status)


def _failure(exc: BaseException) -> JSONResponse:
    failure = classify(exc)
    return JSONResponse(failure.body(), status_code=failure.status)


def create_app(
    engine: Engine,
    auth: Authenticator,
    *,
    cors_origins: list[str] | None = None,
    max_body_bytes: int = 1_000_000,
    allowed_hosts: frozenset[str] | None = None,
) -> FastAPI:
    """`allowed_hosts`: Host names this server answers (None = any). `serve` passes the loopback names when it
    runs without authentication."""
    app = FastAPI(
        title="kb-agent",
        version="0.1.0",
        description="Answers from your documents with path:line citations, under your access policy.",
    )
    registry = CollectorRegistry()
    requests = Counter("kb_agent_requests_total", "HTTP requests", ["route", "status"], registry=registry)
    latency = Histogram("kb_agent_request_seconds", "Request latency", ["route"], registry=registry)
    answers = Counter("kb_agent_answers_total", "Answers", ["refused"], registry=registry)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key"],
        )
    app.add_middleware(HttpGuard, max_body_bytes=max_body_bytes, allowed_hosts=allowed_hosts)

    @app.middleware("http")
    async def metrics_middleware(request: Request, call_next):
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        name = getattr(route, "path", "unmatched")
        requests.labels(name, str(response.status_code)).inc()
        latency.labels(name).observe(time.perf_counter() - started)
        return response

    # the one error map (denied 403, limits 429, bad input 4xx, else 500 without a traceback); the concrete
    # classes keep Starlette from re-raising after the response, which it does for a bare Exception handler
    for kind in (PermissionError, ValueError, LookupError, RuntimeError, OSError, Exception):
        app.add_exception_handler(kind, lambda _, exc: _failure(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}" for e in exc.errors())
        return _error(422, f"invalid request: {problems}"[:2000])

    @app.exception_handler(StarletteHTTPException)
    async def _http(_, exc: StarletteHTTPException):
        return _error(exc.status_code, str(exc.detail))

    def user(
        authorization: str | None = Header(default=None), x_api_key: str | None = Header(default=None)
    ) -> UserContext:
        principal = auth.authenticate(authorization, x_api_key)
        if principal is None:  # --no-auth on loopback: the local owner
            return UserContext.local_owner()
        return engine.identify(principal.user_id, key_admin=principal.admin, claims=principal.claims)

    @app.get("/", include_in_schema=False)
    def web_ui() -> HTMLResponse:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    @app.get("/healthz")
    def healthz() -> dict:
        return {"status": "ok", "knowledge_bases": engine.kb_names()}

    @app.get("/metrics")
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(registry).decode(), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/query")
    def query(body: QueryRequest, who: UserContext = Depends(user)) -> dict:
        answer = engine.answer_query(body.question, user=who, history=body.history, kbs=body.kbs)
        answers.labels(str(answer.refused).lower()).inc()
        return answer.model_dump()

    @app.post("/v1/query/stream")
    def query_stream(body: QueryRequest, who: UserContext = Depends(user)) -> StreamingResponse:
        stream = engine.stream(body.question, user=who, history=body.history, kbs=body.kbs)  # denials raise here

        def events() -> Iterator[str]:
            for event in stream:
                kind = event["type"]
                if kind == "final":
                    answer = event["answer"]
                    answers.labels(str(answer.refused).lower()).inc()
                    yield _sse("citations", {"citations": [c.model_dump() for c in answer.citations]})
                    yield _sse("final", answer.model_dump())
                elif kind == "error":
                    yield _sse("error", {"message": event["error"], "code": event["status"]})
                else:
                    yield _sse(kind, {k: v for k, v in event.items() if k != "type"})

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )

    @app.post("/v1/search")
    def search(body: SearchRequest, who: UserContext = Depends(user)) -> dict:
        response = engine.search(
            body.query,
            user=who,
            kbs=body.kbs,
            mode=body.mode,  # type: ignore[arg-type]  # validated by the request model
            k=body.k,
            hops=body.hops,
        )
        return {"results": [h.public_dict() for h in response.hits], "mode": response.mode, "notices": response.notices}

    @app.post("/v1/index")
    def index(body: IndexRequest, who: UserContext = Depends(user)) -> dict:
        report = engine.index([Path(p) for p in body.paths], kb=body.kb, acl=body.acl, user=who)  # admins only
        return {
            "added": len(report.added),
            "updated": len(report.updated),
            "deleted": len(report.deleted),
            "skipped": [{"path": p, "reason": r} for p, r in report.skipped],
            "warnings": [{"path": p, "message": m} for p, m in report.warnings],
        }

    @app.get("/v1/sources")
    def sources(
        path: str,
        start: int | None = None,
        end: int | None = None,
        kb: str | None = None,
        page: int | None = None,
        who: UserContext = Depends(user),
    ):
        args = {
            k: v for k, v in {"path": path, "start_line": start, "end_line": end, "page": page}.items() if v is not None
        }
        result = engine.run_tool("read_file", args, user=who, kbs=[kb] if kb else None)
        if result.status == "denied":
            return _error(403, result.error or "denied")
        if result.status != "ok":
            return _error(404, result.error or "not found")
        item = result.evidence[0]
        return {"path": item.path, "start_line": item.start_line, "end_line": item.end_line, "text": item.text}

    @app.post("/v1/chat/completions")
    def chat_completions(body: ChatRequest, who: UserContext = Depends(user)):
        turns = [
            {"role": m.role, "content": _text(m.content)} for m in body.messages if m.role in ("user", "assistant")
        ]
        if not turns or turns[-1]["role"] != "user":
            return _error(400, "the last message must come from the user")
        question, history = turns[-1]["content"], turns[:-1]
        completion = Completion(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), body.model)
        if not body.kb_mode:  # the UI's chat mode: the model alone, through the same gate, budget and filter
            if not body.stream:
                return completion.message(engine.chat(question, user=who, history=history), [])
            return StreamingResponse(
                completion.chunks(engine.chat_stream(question, user=who, history=history)),
                media_type="text/event-stream",
            )
        if not body.stream:
            answer = engine.answer_query(question, user=who, history=history)
            answers.labels(str(answer.refused).lower()).inc()
            return completion.message(answer.answer, [c.model_dump() for c in answer.citations], answer.tokens)
        stream = engine.stream(question, user=who, history=history)  # denials raise here: a 403, not a 200
        return StreamingResponse(completion.chunks(stream), media_type="text/event-stream")

    return app


class Completion:
    """The OpenAI chat.completion / chat.completion.chunk shapes."""

    def __init__(self, completion_id: str, created: int, model: str):
        self.id, self.created, self.model = completion_id, created, model

    def message(self, content: str, citations: list[dict], tokens: dict | None = None) -> dict:
        tokens = tokens or {}
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": tokens.get("prompt", 0),
                "completion_tokens": tokens.get("completion", 0),
                "total_tokens": sum(tokens.values()),
            },
            "citations": citations,
        }

    def _chunk(self, delta: dict, finish: str | None = None, **extra) -> str:
        data = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    def chunks(self, events: Iterator[dict]) -> Iterator[str]:
        yield self._chunk({"role": "assistant"})
        streamed = False
        for event in events:
            if event["type"] == "token":
                streamed = True
                yield self._chunk({"content": event["text"]})
            elif event["type"] == "final" and "answer" in event:
                answer = event["answer"]
                if not streamed:
                    yield self._chunk({"content": answer.answer})
                else:  # the checked answer may differ from the raw tokens: send the references
                    footer = answer.answer.split("\n\nReferences:\n", 1)
                    if len(footer) == 2:
                        yield self._chunk({"content": "\n\nReferences:\n" + footer[1]})
                yield self._chunk({}, "stop", citations=[c.model_dump() for c in answer.citations])
            elif event["type"] == "final":
                yield self._chunk({}, "stop", citations=[])
            elif event["type"] == "error":
                yield self._chunk({"content": f"[error: {event['error']}]"}, "stop")
        yield "data: [DONE]\n\n"


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"
