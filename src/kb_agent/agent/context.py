"""Everything a node needs besides the state, for one query: models, tools, the caller, callbacks."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kb_agent.config import Settings
from kb_agent.governance.injection import scan
from kb_agent.governance.outbound import Outbound
from kb_agent.governance.request import Request
from kb_agent.llm.base import LLM, metered
from kb_agent.tools.base import Evidence, Tool, ToolContext
from kb_agent.tools.tasks import ToolRunner

EventFn = Callable[[dict], None]


@dataclass
class AgentContext:
    settings: Settings
    tools: dict[str, Tool]  # only the tools this caller may use
    tool_ctx: ToolContext
    fast: LLM | None  # routing, planning, grading
    main: LLM | None  # synthesis
    strong: LLM | None = None  # escalation: retried when the main model's answer cites nothing
    request: Request | None = None  # the governed request: audit trail and outbound filter
    on_event: EventFn | None = None
    trace_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    runner: ToolRunner = field(default_factory=ToolRunner)
    started: float = field(default_factory=time.perf_counter)
    embed: Callable[[str, list[str]], list[float]] | None = None  # question vs texts similarity (extractive)
    term_weights: Callable[[set[str]], dict[str, float]] | None = None  # how rare each term is in the KBs
    held_terms: Callable[[set[str]], set[str]] | None = None  # the terms some chunk this caller may read holds
    kb_chunks: Callable[[], int] | None = None  # chunks in the KBs searched: how much a word's absence says

    @property
    def outbound(self) -> Outbound:
        return self.request.outbound if self.request is not None else Outbound()

    def record(self, event: str, payload: dict, *, task_id: str | None = None) -> None:
        if self.request is not None:
            self.request.audit(event, payload, task_id=task_id)

    def out_of_time(self) -> bool:
        """The circuit breaker: past KB_AGENT_MAX_ANSWER_SECONDS the agent answers with what it has."""
        return time.perf_counter() - self.started > self.settings.max_answer_seconds

    def llm_calls(self) -> int:
        """The model calls this question has made so far (each metered model once)."""
        return sum(m.usage()["calls"] for m in metered(self.fast, self.main, self.strong))

    @property
    def generative(self) -> bool:
        return self.main is not None

    def emit(self, event: dict) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def quarantine(self, item: Evidence, tool: str) -> dict | None:
        """A passage addressing the assistant stays out of the answer: audited record, or None if clean."""
        flags = scan(item.text)
        if not flags:
            return None
        record = {"path": item.path, "lines": f"{item.start_line}-{item.end_line}", "patterns": flags, "tool": tool}
        self.record("injection_quarantined", record)
        return record

    def fast_path(self, path_type: str, rule_name: str, query: str) -> dict:
        """Record a fast-path hit (seed 000: audit `fast_path_hit {path_type, rule_name, query}`)."""
        record = {"path_type": path_type, "rule_name": rule_name, "query": query}
        self.record("fast_path_hit", record)
        return record


def timed(name: str, started: float) -> list[tuple[str, float]]:
    return [(name, (time.perf_counter() - started) * 1000)]
