"""Node 3: run the planned tool calls in parallel as TaskRequests, each with its timeout; partial success is fine."""

from __future__ import annotations

import time

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.state import AgentState
from kb_agent.agent.steps import StepPlan, run_steps
from kb_agent.tools.base import Evidence
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
    step_plan, trace = state.get("step_plan"), None
    if step_plan and not state.get("steps"):  # a bridge question: its steps run now, in order
        first = next((r.evidence for c, r in zip(calls, results, strict=True) if c["name"] == "hybrid_search"), [])
        merged, trace = run_steps(ctx, state, StepPlan(**step_plan), list(first))
        for item in merged:
            if item.key in seen:
                continue
            seen.add(item.key)
            flagged = ctx.quarantine(item, "hybrid_search")
            if flagged:
                quarantined.append(flagged)
                continue
            existing.append(item.model_copy(update={"id": next_id}))
            new_ids.append(next_id)
            next_id += 1
        existing, new_ids = _ordered(existing, new_ids, {e.key: i for i, e in enumerate(merged)})
        ctx.record("multi_step", {"rule": step_plan["rule"], "steps": trace})
    update: AgentState = {
        "evidence": existing,
        "new_evidence_ids": new_ids,
        "tool_history": history,
        "round_tools": [c["name"] for c in calls],
        "pending_calls": [],
        "timings": timed("tool_exec", started),
    }
    if trace is not None:
        update["steps"] = trace
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


def _ordered(evidence: list[Evidence], new_ids: list[int], order: dict) -> tuple[list[Evidence], list[int]]:
    """This round's evidence in the steps' merged order (what the answer and recall@k read first), numbered
    in that order."""
    fresh = set(new_ids)
    old = [e for e in evidence if e.id not in fresh]
    new = sorted((e for e in evidence if e.id in fresh), key=lambda e: order.get(e.key, len(order)))
    first_id = min(fresh, default=1)
    renumbered = [e.model_copy(update={"id": first_id + i}) for i, e in enumerate(new)]
    return old + renumbered, [e.id for e in renumbered]
