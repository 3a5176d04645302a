"""Node 3: run the planned tool calls in parallel, each with a timeout; partial success is fine."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.state import AgentState
from kb_agent.tools.base import Evidence, ToolArgsError

_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kb-tool")


def tool_exec(state: AgentState, config) -> dict:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    calls = state.get("pending_calls", [])
    futures = []
    for call in calls:
        tool = ctx.tools.get(call["name"])
        if tool is None:  # never reached through plan; a guard for direct graph use
            futures.append((call, None, "tool not available to this caller"))
            continue
        try:
            args = tool.validate(call.get("args", {}))
        except ToolArgsError as exc:
            futures.append((call, None, str(exc)))
            continue
        futures.append((call, _pool.submit(_run, tool, args, ctx.tool_ctx), None))

    existing = list(state.get("evidence", []))
    seen = {e.span for e in existing} | {tuple(span) for span in state.get("rejected_spans", [])}
    next_id = max((e.id for e in existing), default=0) + 1
    new_ids: list[int] = []
    history = []
    deadline = time.perf_counter() + ctx.settings.tool_timeout_s
    for call, future, error in futures:
        record = {"name": call["name"], "args": call.get("args", {}), "status": "error", "count": 0}
        if future is not None:
            try:
                items, latency = future.result(timeout=max(0.0, deadline - time.perf_counter()))
            except FutureTimeout:
                error = f"timed out after {ctx.settings.tool_timeout_s:.0f}s"
                future.cancel()
            except ToolArgsError as exc:
                error = str(exc)
            except Exception as exc:  # a tool failure must not fail the question
                error = f"{type(exc).__name__}: {exc}"
            else:
                record.update(status="ok", latency_ms=round(latency, 1))
                for item in items:
                    if item.span in seen:
                        continue
                    seen.add(item.span)
                    item = item.model_copy(update={"id": next_id})
                    next_id += 1
                    existing.append(item)
                    new_ids.append(item.id)
                    record["count"] += 1
        if error:
            record["error"] = error
        history.append(record)
        ctx.emit({"type": "tool", "name": call["name"], "args": call.get("args", {}), "status": record["status"],
                  "count": record["count"], "error": record.get("error")})
    update: dict = {"evidence": existing, "new_evidence_ids": new_ids, "tool_history": history,
                    "round_tools": [c["name"] for c in calls],
                    "pending_calls": [], "timings": timed("tool_exec", started)}
    if ctx.tool_ctx.notices:
        update["notices"] = list(dict.fromkeys(ctx.tool_ctx.notices))
        ctx.tool_ctx.notices.clear()
    if state["route"].get("complexity") == "simple":
        update["fast_paths"] = [ctx.fast_path("simple_skip_grading", "simple_route", state["query"])]
    return update


def _run(tool, args, tool_ctx) -> tuple[list[Evidence], float]:
    started = time.perf_counter()
    items = tool.run(args, tool_ctx)
    return items, (time.perf_counter() - started) * 1000
