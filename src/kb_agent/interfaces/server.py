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
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from pydantic import BaseModel, Field

from kb_agent.engine import Engine
from kb_agent.governance.budget import LimitExceeded
from kb_agent.governance.gate import AccessDenied
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.auth import Authenticator, AuthError, Principal
from kb_agent.store.kb import KBError

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


def create_app(engine: Engine, auth: Authenticator, *, cors_origins: list[str] | None = None,
               max_body_bytes: int = 1_000_000) -> FastAPI:
    app = FastAPI(title="kb-agent", version="0.1.0",
                  description="Answers from your documents with path:line citations, under your access policy.")
    registry = CollectorRegistry()
    requests = Counter("kb_agent_requests_total", "HTTP requests", ["route", "status"], registry=registry)
    latency = Histogram("kb_agent_request_seconds", "Request latency", ["route"], registry=registry)
    answers = Counter("kb_agent_answers_total", "Answers", ["refused"], registry=registry)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cors_origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "X-API-Key"])

    @app.middleware("http")
    async def guard(request: Request, call_next):
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > max_body_bytes:
            return _error(413, f"request body larger than {max_body_bytes:,} bytes")
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        name = getattr(route, "path", "unmatched")
        requests.labels(name, str(response.status_code)).inc()
        latency.labels(name).observe(time.perf_counter() - started)
        return response

    @app.exception_handler(AuthError)
    async def _auth(_, exc: AuthError):
        return _error(exc.status, str(exc))

    @app.exception_handler(AccessDenied)
    async def _denied(_, exc: AccessDenied):
        return _error(403, str(exc))

    @app.exception_handler(LimitExceeded)
    async def _limited(_, exc: LimitExceeded):
        return _error(429, str(exc))

    @app.exception_handler(KBError)
    async def _kb(_, exc: KBError):
        return _error(404, str(exc))

    def user(authorization: str | None = Header(default=None),
             x_api_key: str | None = Header(default=None)) -> UserContext:
        principal = auth.authenticate(authorization, x_api_key)
        return _user_of(principal)

    def admin(authorization: str | None = Header(default=None),
              x_api_key: str | None = Header(default=None)) -> UserContext:
        principal = auth.authenticate(authorization, x_api_key)
        if principal is not None and not principal.admin:
            raise AuthError("this endpoint needs an admin key", 403)
        return _user_of(principal)

    def _user_of(principal: Principal | None) -> UserContext:
        return UserContext.local_owner() if principal is None else engine.identify(principal.user_id)

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
        def events() -> Iterator[str]:
            for event in engine.stream(body.question, user=who, history=body.history, kbs=body.kbs):
                kind = event["type"]
                if kind == "final":
                    answer = event["answer"]
                    answers.labels(str(answer.refused).lower()).inc()
                    yield _sse("citations", {"citations": [c.model_dump() for c in answer.citations]})
                    yield _sse("final", answer.model_dump())
                elif kind == "error":
                    yield _sse("error", {"message": event["error"]})
                else:
                    yield _sse(kind, {k: v for k, v in event.items() if k != "type"})
        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/v1/search")
    def search(body: SearchRequest, who: UserContext = Depends(user)) -> dict:
        response = engine.search(body.query, user=who, kbs=body.kbs, mode=body.mode, k=body.k,  # type: ignore[arg-type]
                                 hops=body.hops)
        return {"results": [h.public_dict() for h in response.hits], "mode": response.mode,
                "notices": response.notices}

    @app.post("/v1/index")
    def index(body: IndexRequest, who: UserContext = Depends(admin)) -> dict:
        report = engine.index([Path(p) for p in body.paths], kb=body.kb, acl=body.acl)
        return {"added": len(report.added), "updated": len(report.updated), "deleted": len(report.deleted),
                "skipped": len(getattr(report, "skipped", []))}

    @app.get("/v1/sources")
    def sources(path: str, start: int | None = None, end: int | None = None, kb: str | None = None,
                page: int | None = None, who: UserContext = Depends(user)):
        args = {k: v for k, v in {"path": path, "start_line": start, "end_line": end, "page": page}.items()
                if v is not None}
        result = engine.run_tool("read_file", args, user=who, kbs=[kb] if kb else None)
        if result.status == "denied":
            return _error(403, result.error or "denied")
        if result.status != "ok":
            return _error(404, result.error or "not found")
        item = result.evidence[0]
        return {"path": item.path, "start_line": item.start_line, "end_line": item.end_line, "text": item.text}

    @app.post("/v1/chat/completions")
    def chat_completions(body: ChatRequest, who: UserContext = Depends(user)):
        turns = [{"role": m.role, "content": _text(m.content)} for m in body.messages
                 if m.role in ("user", "assistant")]
        if not turns or turns[-1]["role"] != "user":
            return _error(400, "the last message must come from the user")
        question, history = turns[-1]["content"], turns[:-1]
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if not body.kb_mode:  # the UI's chat mode: the model alone, still behind auth and the rate limit
            engine.gate.enter(who, [], trace_id=completion_id, action="chat")  # no documents, still budgeted
            model = engine.llms().main
            if model is None:
                return _error(503, "chat mode needs a generative model (kb-agent models install, or an API)")
            reply = model.chat([{"role": "system", "content": "You are a helpful assistant."}, *history[-10:],
                                {"role": "user", "content": question}], purpose="chat_mode")
            return {"id": completion_id, "object": "chat.completion", "created": created, "model": body.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                 "finish_reason": "stop"}], "citations": []}
        if not body.stream:
            answer = engine.answer_query(question, user=who, history=history)
            answers.labels(str(answer.refused).lower()).inc()
            return {"id": completion_id, "object": "chat.completion", "created": created, "model": body.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.answer},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": answer.tokens.get("prompt", 0),
                              "completion_tokens": answer.tokens.get("completion", 0),
                              "total_tokens": sum(answer.tokens.values())},
                    "citations": [c.model_dump() for c in answer.citations]}

        def chunks() -> Iterator[str]:
            def chunk(delta: dict, finish: str | None = None, **extra) -> str:
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
                data = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                        "model": body.model, "choices": [choice], **extra}
                return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

            yield chunk({"role": "assistant"})
            streamed = False
            for event in engine.stream(question, user=who, history=history):
                if event["type"] == "token":
                    streamed = True
                    yield chunk({"content": event["text"]})
                elif event["type"] == "final":
                    answer = event["answer"]
                    if not streamed:
                        yield chunk({"content": answer.answer})
                    else:  # the checked answer may differ from the raw tokens: send the references
                        footer = answer.answer.split("\n\nReferences:\n", 1)
                        if len(footer) == 2:
                            yield chunk({"content": "\n\nReferences:\n" + footer[1]})
                    yield chunk({}, "stop", citations=[c.model_dump() for c in answer.citations])
                elif event["type"] == "error":
                    yield chunk({"content": f"[error: {event['error']}]"}, "stop")
            yield "data: [DONE]\n\n"
        return StreamingResponse(chunks(), media_type="text/event-stream")

    return app


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"
