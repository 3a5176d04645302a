"""`/v1/query` and `/v1/query/stream` (SSE): answers with citations, through the engine's gate."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.server.deps import Services, caller, services, sse

router = APIRouter()


class QueryRequest(BaseModel):
    question: str = Field(min_length=1, max_length=4000)
    kbs: list[str] | None = None
    history: list[dict] = Field(default_factory=list, max_length=40)


@router.post("/v1/query")
def query(body: QueryRequest, who: UserContext = Depends(caller), svc: Services = Depends(services)) -> dict:
    answer = svc.engine.answer_query(body.question, user=who, history=body.history, kbs=body.kbs)
    svc.count_answer(answer.refused)
    return answer.model_dump()


@router.post("/v1/query/stream")
def query_stream(
    body: QueryRequest, who: UserContext = Depends(caller), svc: Services = Depends(services)
) -> StreamingResponse:
    stream = svc.engine.stream(body.question, user=who, history=body.history, kbs=body.kbs)  # denials raise here

    def events() -> Iterator[str]:
        for event in stream:
            kind = event["type"]
            if kind == "final":
                answer = event["answer"]
                svc.count_answer(answer.refused)
                yield sse("citations", {"citations": [c.model_dump() for c in answer.citations]})
                yield sse("final", answer.model_dump())
            elif kind == "error":
                yield sse("error", {"message": event["error"], "code": event["status"]})
            else:
                yield sse(kind, {k: v for k, v in event.items() if k != "type"})

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
