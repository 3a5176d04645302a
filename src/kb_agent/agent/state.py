"""The graph's state: what one question accumulates on its way from route to answer."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel, Field

from kb_agent.tools.base import Evidence

QueryType = Literal["exact", "conceptual", "relational", "file_discovery", "chitchat"]
Complexity = Literal["simple", "complex", "chitchat"]
GradeAction = Literal["GENERATE", "REFINE", "RE_RETRIEVE"]


class Route(BaseModel):
    """analyze_and_route's decision (seed 000 D1)."""

    query_type: QueryType = "conceptual"
    complexity: Complexity = "complex"
    sub_questions: list[str] = Field(default_factory=list, max_length=5)
    suggested_tools: list[str] = Field(default_factory=list, max_length=6)
    grep_keywords: list[str] = Field(default_factory=list, max_length=10)


class RouteState(TypedDict, total=False):
    """`Route`'s fields as they travel in the state, plus who decided."""

    query_type: QueryType
    complexity: Complexity
    sub_questions: list[str]
    suggested_tools: list[str]
    grep_keywords: list[str]
    decided_by: str  # a rule's name | "llm" | "fallback" | "no_llm_default" | "re_retrieve_strategy_N"
    probe_first: bool  # a long question of no multi-step shape: its own search before any router call


class Grade(TypedDict):
    """grade_evidence's verdict (seed 000 D2): what to do next, who decided, the per-passage scores."""

    action: GradeAction
    decided_by: str
    scores: list[float]
    avg: float | None
    capped: NotRequired[bool]  # forced to GENERATE by the iteration or time limit


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


def recent_history(state: AgentState, turns: int) -> list[dict]:
    """The last user/assistant messages, so follow-ups are understood in context."""
    return [m for m in (state.get("history") or [])[-turns:] if m.get("role") in ("user", "assistant")]


class AgentState(TypedDict, total=False):
    query: str
    history: list[dict]
    route: RouteState
    strategy: int  # bumped by RE_RETRIEVE: which retrieval strategy to try next
    probed: bool  # a probe_first question's own search ran (tool_exec judged its first hop)
    planned_queries: list[str]
    planner_fallback: str | None
    pending_calls: list[dict]
    step_plan: dict  # {"steps": [...], "rule": ...}: a bridge question's ordered search steps (agent/step_rules.py)
    steps: list[dict]  # what each step searched and the answer it passed on
    evidence: list[Evidence]
    new_evidence_ids: list[int]
    rejected_spans: Annotated[list[list], operator.add]  # graded irrelevant: not brought back later
    round_tools: list[str]  # tools called in the latest round (grading rules look at them)
    tool_history: Annotated[list[dict], operator.add]
    grade: Grade
    iteration: int
    answer: str
    citations: list[dict]
    claims: list[dict]  # {sentence, supported, citation}: the claim check of every sentence written
    refused: bool
    fast_paths: Annotated[list[dict], operator.add]
    timings: Annotated[list[tuple[str, float]], operator.add]
    notices: Annotated[list[str], operator.add]
