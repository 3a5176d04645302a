"""A tool is declared once: name, description, input schema, limits - the plan prompt, argument
validation and execution all read the same declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, Field, ValidationError

from kb_agent.config import Settings
from kb_agent.store.access import AccessFilter

if TYPE_CHECKING:
    from kb_agent.retrieval.searcher import Searcher
    from kb_agent.store.kb import KnowledgeBase


class Evidence(BaseModel):
    """One span of a source that a tool returned; what the agent grades and cites."""

    id: int = 0
    source: str
    path: str
    start_line: int
    end_line: int
    text: str
    score: float = 0.0
    tool: str = ""
    kb: str = ""
    doc_id: str = ""
    title: str = ""
    page: int | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    acl: list[str] = Field(default_factory=list)

    @property
    def span(self) -> tuple[str, int, int, int | None]:
        return (self.source, self.start_line, self.end_line, self.page)

    @property
    def citation(self) -> str:
        page = f"#page={self.page}" if self.page else ""
        return f"{self.path}{page}:L{self.start_line}-{self.end_line}"


@dataclass
class ToolContext:
    """What a tool may use on behalf of one caller: the caller's access scope is fixed here."""

    settings: Settings
    access: AccessFilter
    kbs: list[KnowledgeBase]
    searcher: Searcher
    notices: list[str] = field(default_factory=list)


class ToolArgsError(ValueError):
    pass


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[BaseModel]]
    freshness: ClassVar[str] = "snapshot"

    def run(self, args: BaseModel, ctx: ToolContext) -> list[Evidence]:  # pragma: no cover - abstract
        raise NotImplementedError

    def validate(self, raw: dict) -> BaseModel:
        try:
            return self.Input.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors())
            raise ToolArgsError(f"{self.name}: {problems}") from exc

    def card(self) -> dict:
        """The part of the declaration a planner sees."""
        schema = self.Input.model_json_schema()
        return {"name": self.name, "description": self.description,
                "parameters": {k: v for k, v in schema.items() if k in ("properties", "required", "type")}}
