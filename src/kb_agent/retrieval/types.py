"""What a search returns: ranked passages with exact line spans and per-retriever diagnostics."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Mode = Literal["hybrid", "bm25", "dense", "grep"]


class SearchHit(BaseModel):
    source: str
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    kb: str
    doc_id: str
    chunk_id: str
    title: str = ""
    heading_path: list[str] = Field(default_factory=list)
    page: int | None = None
    source_type: str = "text"
    metadata: dict = Field(default_factory=dict)
    acl: list[str] = Field(default_factory=list, description="groups allowed to see it (empty = public)")
    ranks: dict[str, int] = Field(default_factory=dict, description="1-based rank in each retriever")
    scores: dict[str, float] = Field(default_factory=dict, description="raw score in each retriever")

    @property
    def citation(self) -> str:
        page = f"#page={self.page}" if self.page else ""
        return f"{self.path}{page}:L{self.start_line}-{self.end_line}"

    def public_dict(self) -> dict:
        """The stable JSON shape of `kb-agent search --json`."""
        return self.model_dump(
            include={"source", "path", "start_line", "end_line", "text", "score", "kb", "doc_id", "chunk_id"}
        )


class SearchResponse(BaseModel):
    query: str
    mode: Mode
    hits: list[SearchHit]
    dense_coverage: float | None = Field(default=None, description="share of chunks with a vector")
    timings_ms: dict[str, float] = Field(default_factory=dict)
    notices: list[str] = Field(default_factory=list)
