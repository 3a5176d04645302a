"""A tool is declared once: name, description, input schema, limits - the plan prompt, argument
validation and execution all read the same declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.store.spans import Passage

if TYPE_CHECKING:
    from kb_agent.governance.request import Request
    from kb_agent.retrieval.searcher import Searcher
    from kb_agent.store.base import KnowledgeBase


class Evidence(Passage):
    """One passage a tool returned; what the agent grades and cites (`id`: its number in the prompt)."""

    id: int = 0
    tool: str = ""


class EvidenceList(BaseModel):
    """The output schema every tool shares: spans the agent can grade and cite."""

    evidence: list[Evidence]


Freshness = Literal["realtime", "near-realtime", "snapshot"]


class ToolCard(BaseModel):
    """A tool's declaration (seed 003 §3.5): what the planner sees and what the runner enforces."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    auth_scope: list[str]
    freshness: Freshness
    timeout_ms: int
    rate_limit: str | None = Field(default=None, description='"N/min" per caller, None = unlimited')
    citation_policy: str


@dataclass
class ToolContext:
    """What a tool may use on behalf of one caller: the caller's access scope is fixed here."""

    settings: Settings
    access: AccessFilter
    kbs: list[KnowledgeBase]
    searcher: Searcher | None  # None: no knowledge base exists yet
    notices: list[str] = field(default_factory=list)
    user_id: str = "local"
    groups: list[str] = field(default_factory=list)
    services: Any = None  # connectors and the index writer: set by the engine (engine.ToolServices)
    request: Request | None = None  # the governed request the calls belong to (audit trail)
    allowed_urls: frozenset[str] | None = None  # web_fetch may reach only these (None: the caller typed the URL)

    def require_searcher(self) -> Searcher:
        if self.searcher is None:
            raise ToolArgsError("no knowledge base is indexed yet (run `kb-agent index`)")
        return self.searcher


class ToolArgsError(ValueError):
    pass


class ToolDenied(PermissionError):
    """The caller may not do this (ACL, policy, SSRF rule): reported as status "denied"."""


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[BaseModel]]
    Output: ClassVar[type[BaseModel]] = EvidenceList
    auth_scope: ClassVar[tuple[str, ...]] = ("kb.read",)
    freshness: ClassVar[Freshness] = "snapshot"
    timeout_ms: ClassVar[int] = 20_000
    rate_limit_per_min: ClassVar[int | None] = None
    citation_policy: ClassVar[str] = "path:Lx-Ly of the indexed file"

    def run(self, args: Any, ctx: ToolContext) -> list[Evidence]:  # pragma: no cover - abstract
        raise NotImplementedError

    def validate(self, raw: dict) -> BaseModel:
        try:
            return self.Input.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors())
            raise ToolArgsError(f"{self.name}: {problems}") from exc

    def card(self) -> ToolCard:
        schema = self.Input.model_json_schema()
        return ToolCard(
            name=self.name,
            description=self.description,
            input_schema={k: v for k, v in schema.items() if k in ("properties", "required", "type", "$defs")},
            output_schema=self.Output.model_json_schema(),
            auth_scope=list(self.auth_scope),
            freshness=self.freshness,
            timeout_ms=self.timeout_ms,
            rate_limit=f"{self.rate_limit_per_min}/min" if self.rate_limit_per_min else None,
            citation_policy=self.citation_policy,
        )
