"""The web UI, health, metrics and `/v1/index` (admins only: the gate decides)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field

from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.server.deps import Services, caller, services

STATIC = Path(__file__).resolve().parents[1] / "web"
router = APIRouter()


class IndexRequest(BaseModel):
    paths: list[str] = Field(min_length=1, max_length=50)
    kb: str | None = None
    acl: list[str] | None = None


@router.get("/", include_in_schema=False)
def web_ui() -> HTMLResponse:
    return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))


@router.get("/healthz")
def healthz(svc: Services = Depends(services)):
    """Liveness and the store's reachability (503 when the store does not answer, so a balancer routes away)."""
    store = svc.engine.store_health()
    public = {k: v for k, v in store.items() if k in ("store", "reachable", "row_level_security", "pgvector")}
    if not store.get("reachable"):
        return JSONResponse({"status": "unavailable", "store": public}, status_code=503)
    return {"status": "ok", "store": public, "knowledge_bases": svc.engine.kb_names()}


@router.get("/metrics")
def metrics(svc: Services = Depends(services)) -> PlainTextResponse:
    return PlainTextResponse(generate_latest(svc.registry).decode(), media_type=CONTENT_TYPE_LATEST)


@router.post("/v1/index")
def index(body: IndexRequest, who: UserContext = Depends(caller), svc: Services = Depends(services)) -> dict:
    report = svc.engine.index([Path(p) for p in body.paths], kb=body.kb, acl=body.acl, user=who)  # admins only
    return {
        "added": len(report.added),
        "updated": len(report.updated),
        "deleted": len(report.deleted),
        "skipped": [{"path": p, "reason": r} for p, r in report.skipped],
        "warnings": [{"path": p, "message": m} for p, m in report.warnings],
    }
