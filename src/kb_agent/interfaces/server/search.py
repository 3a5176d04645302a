"""`/v1/search`: ranked passages with citations, filtered by the caller's ACL inside every engine."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from kb_agent.engine import Mode
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.server.deps import Services, caller, services

router = APIRouter()


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=1000)
    kbs: list[str] | None = None
    mode: Mode = "hybrid"
    k: int = Field(default=10, ge=1, le=100)
    hops: int = Field(default=1, ge=1, le=2)


@router.post("/v1/search")
def search(body: SearchRequest, who: UserContext = Depends(caller), svc: Services = Depends(services)) -> dict:
    response = svc.engine.search(body.query, user=who, kbs=body.kbs, mode=body.mode, k=body.k, hops=body.hops)
    return {"results": [h.public_dict() for h in response.hits], "mode": response.mode, "notices": response.notices}
