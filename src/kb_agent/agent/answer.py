"""The public result of a question (the shape `Engine.answer_query` promises to keep)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from kb_agent.governance.outbound import Outbound
from kb_agent.llm.base import metered
from kb_agent.store.spans import Span


class Citation(Span):
    """`start_line`-`end_line`: the few lines that state the cited content; `context_*`: the passage they
    were found in (what an "open in context" view shows). Its knowledge base, document and ACL stay
    inside: an answer never tells its reader which groups may read a source."""

    n: int
    kb: str = Field(default="", exclude=True)
    doc_id: str = Field(default="", exclude=True)
    acl: list[str] = Field(default_factory=list, exclude=True)
    snippet: str = ""
    context_start_line: int | None = None
    context_end_line: int | None = None


class ClaimCheck(BaseModel):
    """One sentence the answer model (or the extractive answerer) wrote, and whether the evidence states it.
    Unsupported sentences are not in the answer."""

    sentence: str
    supported: bool
    citation: str | None = None
    off_question: bool = False  # true, but not about what the question asks (its rare names or words): not shown


class Answer(BaseModel):
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    claims: list[ClaimCheck] = Field(default_factory=list, description="the claim check of every sentence")
    refused: bool = False
    route: dict = Field(
        default_factory=dict, description="query_type, complexity, decided_by (and probe_first: searched first)"
    )
    iterations: int = 0
    llm_calls: int = 0
    tokens: dict[str, int] = Field(default_factory=lambda: {"prompt": 0, "completion": 0})
    fast_paths: list[dict] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="milliseconds per node")
    planned_queries: list[str] = Field(default_factory=list)
    steps: list[dict] = Field(default_factory=list, description="multi-step search: each step's query and answer")
    planner_fallback: str | None = None
    tool_calls: list[dict] = Field(default_factory=list)
    evidence: list[dict] = Field(default_factory=list, description="final evidence (for evaluation)")
    notices: list[str] = Field(default_factory=list)
    trace_id: str = ""

    CLI_KEYS: ClassVar[tuple[str, ...]] = (
        "answer",
        "citations",
        "claims",
        "refused",
        "route",
        "llm_calls",
        "iterations",
        "tokens",
        "fast_paths",
        "timings",
        "steps",
    )

    def cli_dict(self) -> dict:
        return self.model_dump(include=set(self.CLI_KEYS))

    def filtered(self, outbound: Outbound) -> Answer:
        """A copy in which every text a caller sees has passed the request's outbound filter."""
        shown = outbound.value(  # one pass of the filter over every text the caller sees
            {
                "answer": self.answer,
                "notices": self.notices,
                "snippets": [c.snippet for c in self.citations],
                "sentences": [c.sentence for c in self.claims],
                "planned_queries": self.planned_queries,
                "tool_calls": self.tool_calls,
                "steps": self.steps,
            }
        )
        return self.model_copy(
            update={
                "answer": shown["answer"],
                "notices": shown["notices"],
                "citations": [
                    c.model_copy(update={"snippet": s}) for c, s in zip(self.citations, shown["snippets"], strict=True)
                ],
                "claims": [
                    c.model_copy(update={"sentence": s}) for c, s in zip(self.claims, shown["sentences"], strict=True)
                ],
                "planned_queries": shown["planned_queries"],
                "tool_calls": shown["tool_calls"],
                "steps": shown["steps"],
            }
        )


def to_answer(final: dict, trace_id: str, llms: list, notice: str | None) -> Answer:
    """The public Answer from the graph's final state and the question's metered models."""
    usage = [m.usage() for m in metered(*llms)]
    timings: dict[str, float] = {}
    for node, ms in final.get("timings", []):
        timings[node] = round(timings.get(node, 0.0) + ms, 1)
    route = final.get("route", {})
    notices = ([notice] if notice else []) + list(dict.fromkeys(final.get("notices", [])))
    return Answer(
        answer=final.get("answer", ""),
        citations=final.get("citations", []),
        claims=final.get("claims", []),
        refused=final.get("refused", False),
        route={
            **{k: route.get(k) for k in ("query_type", "complexity", "decided_by")},
            **({"probe_first": True} if route.get("probe_first") else {}),
        },
        iterations=final.get("iteration", 0),
        llm_calls=sum(u["calls"] for u in usage),
        tokens={
            "prompt": sum(u["prompt_tokens"] for u in usage),
            "completion": sum(u["completion_tokens"] for u in usage),
        },
        fast_paths=final.get("fast_paths", []),
        timings=timings,
        planned_queries=final.get("planned_queries", []),
        steps=final.get("steps", []),
        planner_fallback=final.get("planner_fallback"),
        tool_calls=final.get("tool_history", []),
        evidence=[
            {
                "id": e.id,
                "path": e.path,
                "start_line": e.start_line,
                "end_line": e.end_line,
                "doc_id": e.doc_id,
                "tool": e.tool,
                "score": e.score,
                "scores": e.scores,
            }
            for e in final.get("evidence", [])
        ],
        notices=notices,
        trace_id=trace_id,
    )
