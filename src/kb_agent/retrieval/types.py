"""What a search returns: ranked passages with exact line spans and per-retriever diagnostics."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kb_agent.store.spans import Passage

Mode = Literal["hybrid", "bm25", "dense", "grep"]


class SearchHit(Passage):
    """A ranked passage of one chunk, with per-retriever ranks."""

    chunk_id: str
    source_type: str = "text"
    metadata: dict = Field(default_factory=dict)
    ranks: dict[str, int] = Field(default_factory=dict, description="1-based rank in each retriever")

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
