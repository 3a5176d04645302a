"""The unit every store holds: a line-exact chunk of a document, with its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb_agent.store.spans import cite


@dataclass
class Chunk:
    kb: str
    doc_id: str
    chunk_id: str
    source: str
    path: str
    start_line: int
    end_line: int
    text: str
    title: str = ""
    heading_path: list[str] = field(default_factory=list)
    page: int | None = None
    content_hash: str = ""
    acl: list[str] = field(default_factory=list)
    updated_at: float = 0.0
    source_type: str = "text"
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line, self.page)
