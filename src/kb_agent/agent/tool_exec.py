"""Node 3: run the planned tool calls in parallel as TaskRequests, each with its timeout; partial success is fine."""

from __future__ import annotations

import time

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.state import AgentState
from kb_agent.tools.tasks import TaskRequest


def tool_exec(state: AgentState, config) -> AgentState:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    calls = state.get("pending_calls", [])
    requests = [
        TaskRequest(
            trace_id=ctx.trace_id,
            parent_task_id=f"node:tool_exec:{state.get('iteration', 0)}",
            tool=call["name"],
            input=call.get("args", {}),
            auth_scope=list(getattr(ctx.tools.get(call["name"]), "auth_scope", ())),
        )
        for call in calls
    ]
    ctx.emit({"type": "step", "label": "🔍 Searching"})
    results = ctx.runner.run_many(requests, ctx.tools, ctx.tool_ctx)

    existing = list(state.get("evidence", []))
    seen = {e.key for e in existing} | {tuple(span) for span in state.get("rejected_spans", [])}
    next_id = max((e.id for e in existing), default=0) + 1
    new_ids: list[int] = []
    history = []
    quarantined: list[dict] = []
    for call, result in zip(calls, results, strict=True):
        record = {
            "name": call["name"],
            "args": call.get("args", {}),
            "status": result.status,
            "count": 0,
            "task_id": result.task_id,
        }
        if result.status == "ok":
            record["latency_ms"] = result.metrics.get("latency_ms")
            for item in result.evidence:
                if item.key in seen:
                    continue
                seen.add(item.key)
                flagged = ctx.quarantine(item, call["name"])
                if flagged:
                    quarantined.append(flagged)
                    continue
                existing.append(item.model_copy(update={"id": next_id}))
                new_ids.append(next_id)
                next_id += 1
                record["count"] += 1
        else:
            record["error"] = result.error
        history.append(record)  # (the runner wrote the tool_call audit record)
        ctx.emit(
            {
                "type": "tool",
                "name": call["name"],
                "args": call.get("args", {}),
                "status": record["status"],
                "count": record["count"],
                "error": record.get("error"),
            }
        )
    update: AgentState = {
        "evidence": existing,
        "new_evidence_ids": new_ids,
        "tool_history": history,
        "round_tools": [c["name"] for c in calls],
        "pending_calls": [],
        "timings": timed("tool_exec", started),
    }
    notices = list(dict.fromkeys(ctx.tool_ctx.notices))
    ctx.tool_ctx.notices.clear()
    if quarantined:
        where = ", ".join(f"{q['path']}:L{q['lines']}" for q in quarantined[:3])
        notices.append(
            f"{len(quarantined)} passage(s) quarantined: they contain instructions aimed at the assistant ({where})"
        )
    if notices:
        update["notices"] = notices
    if state["route"].get("complexity") == "simple":
        update["fast_paths"] = [ctx.fast_path("simple_skip_grading", "simple_route", state["query"])]
    return update
