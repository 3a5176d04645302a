"""`/v1/sources`: the cited lines of a file, read through the `read_file` tool (ACL, live-file check)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.server.deps import Services, caller, error, services

router = APIRouter()


@router.get("/v1/sources")
def sources(
    path: str,
    start: int | None = None,
    end: int | None = None,
    kb: str | None = None,
    page: int | None = None,
    who: UserContext = Depends(caller),
    svc: Services = Depends(services),
):
    args = {
        k: v for k, v in {"path": path, "start_line": start, "end_line": end, "page": page}.items() if v is not None
    }
    result = svc.engine.run_tool("read_file", args, user=who, kbs=[kb] if kb else None)
    if result.status == "denied":
        return error(403, result.error or "denied")
    if result.status != "ok":
        return error(404, result.error or "not found")
    item = result.evidence[0]
    return {"path": item.path, "start_line": item.start_line, "end_line": item.end_line, "text": item.text}
