"""Tool calls travel as TaskRequest / TaskResult records (seed 003 §3.6), through one runner that the
agent and `kb-agent tools run` share: same allow-list, argument validation, rate limit and timeout."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal

from pydantic import BaseModel, Field

from kb_agent.governance.budget import RateLimiter
from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext, ToolDenied

_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kb-tool")


def new_id() -> str:
    return uuid.uuid4().hex[:16]


class TaskRequest(BaseModel):
    trace_id: str
    task_id: str = Field(default_factory=new_id)
    parent_task_id: str | None = None
    tool: str
    auth_scope: list[str] = Field(default_factory=list)
    deadline_ms: int | None = None
    input: dict[str, Any] = Field(default_factory=dict)


class TaskResult(BaseModel):
    trace_id: str
    task_id: str
    parent_task_id: str | None = None
    tool: str
    status: Literal["ok", "error", "denied"]
    error: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    metrics: dict[str, float] = Field(default_factory=dict)

    def public_dict(self) -> dict:
        """The JSON shape of `kb-agent tools run --json`."""
        return {
            "status": self.status,
            "error": self.error,
            "task_id": self.task_id,
            "trace_id": self.trace_id,
            "latency_ms": self.metrics.get("latency_ms"),
            "evidence": [
                e.model_dump(include={"source", "path", "start_line", "end_line", "text", "page"})
                for e in self.evidence
            ],
        }


class ToolRunner:
    def __init__(self, limiter: RateLimiter | None = None):
        self.limiter = limiter or RateLimiter()

    def run_many(self, requests: list[TaskRequest], allowed: dict[str, Tool], ctx: ToolContext) -> list[TaskResult]:
        """In parallel, each with its own timeout; one failure never fails the others."""
        started = time.perf_counter()
        pending: list[tuple[TaskRequest, Any, float]] = []
        results: dict[str, TaskResult] = {}
        for request in requests:
            prepared = self._prepare(request, allowed, ctx)
            if isinstance(prepared, TaskResult):
                results[request.task_id] = prepared
                continue
            tool, args, timeout_s = prepared
            pending.append((request, _pool.submit(_timed_run, tool, args, ctx), timeout_s))
        for request, future, timeout_s in pending:
            remaining = max(0.0, started + timeout_s - time.perf_counter())
            try:
                items, latency = future.result(timeout=remaining)
            except FutureTimeout:
                future.cancel()
                results[request.task_id] = self._result(request, "error", f"timed out after {timeout_s:g}s")
            except ToolDenied as exc:
                results[request.task_id] = self._result(request, "denied", str(exc))
            except ToolArgsError as exc:
                results[request.task_id] = self._result(request, "error", str(exc))
            except Exception as exc:  # a tool failure must not fail the question
                results[request.task_id] = self._result(request, "error", f"{type(exc).__name__}: {exc}")
            else:
                results[request.task_id] = self._result(request, "ok", None, items, latency)
        ordered = [results[r.task_id] for r in requests]
        if ctx.request is not None:  # one tool_call record per call, whoever made it (agent, tool mode, CLI, MCP)
            for request, result in zip(requests, ordered, strict=True):
                ctx.request.audit(
                    "tool_call",
                    {
                        "tool": request.tool,
                        "args": request.input,
                        "status": result.status,
                        "error": result.error,
                        "results": len(result.evidence),
                        "user": ctx.user_id,
                        "latency_ms": result.metrics.get("latency_ms"),
                    },
                    task_id=result.task_id,
                    parent_task_id=result.parent_task_id,
                )
        return ordered

    def run(self, request: TaskRequest, allowed: dict[str, Tool], ctx: ToolContext) -> TaskResult:
        return self.run_many([request], allowed, ctx)[0]

    def _prepare(self, request: TaskRequest, allowed: dict[str, Tool], ctx: ToolContext):
        tool = allowed.get(request.tool)
        if tool is None:  # a forged or hallucinated call: the caller's tool set does not have it
            return self._result(request, "denied", f"tool {request.tool!r} is not available to this caller")
        try:
            args = tool.validate(request.input)
        except ToolArgsError as exc:
            return self._result(request, "error", str(exc))
        if self.limiter.wait_s((ctx.user_id, tool.name), tool.rate_limit_per_min) > 0:
            return self._result(request, "denied", f"{tool.name}: rate limit of {tool.rate_limit_per_min}/min reached")
        limit_ms = min(tool.timeout_ms, int(ctx.settings.tool_timeout_s * 1000), request.deadline_ms or 10**9)
        return tool, args, limit_ms / 1000

    @staticmethod
    def _result(request: TaskRequest, status, error, items=(), latency: float | None = None) -> TaskResult:
        metrics = {"count": float(len(items))}
        if latency is not None:
            metrics["latency_ms"] = round(latency, 1)
        return TaskResult(
            trace_id=request.trace_id,
            task_id=request.task_id,
            parent_task_id=request.parent_task_id,
            tool=request.tool,
            status=status,
            error=error,
            evidence=list(items),
            metrics=metrics,
        )


def _timed_run(tool: Tool, args, ctx: ToolContext) -> tuple[list[Evidence], float]:
    started = time.perf_counter()
    items = tool.run(args, ctx)
    return items, (time.perf_counter() - started) * 1000
