"""The public result of a question (the shape `Engine.answer_query` promises to keep)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field


class Citation(BaseModel):
    n: int
    source: str
    path: str
    start_line: int
    end_line: int
    page: int | None = None
    snippet: str = ""


class Answer(BaseModel):
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    refused: bool = False
    route: dict = Field(default_factory=dict, description="query_type, complexity, decided_by")
    iterations: int = 0
    llm_calls: int = 0
    tokens: dict[str, int] = Field(default_factory=lambda: {"prompt": 0, "completion": 0})
    fast_paths: list[dict] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="milliseconds per node")
    planned_queries: list[str] = Field(default_factory=list)
    planner_fallback: str | None = None
    tool_calls: list[dict] = Field(default_factory=list)
    evidence: list[dict] = Field(default_factory=list, description="final evidence (for evaluation)")
    notices: list[str] = Field(default_factory=list)
    trace_id: str = ""

    CLI_KEYS: ClassVar[tuple[str, ...]] = ("answer", "citations", "refused", "route", "llm_calls", "iterations", "tokens", "fast_paths",
                "timings")

    def cli_dict(self) -> dict:
        return self.model_dump(include=set(self.CLI_KEYS))
