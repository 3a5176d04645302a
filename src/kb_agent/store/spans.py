"""The one span type: where a piece of evidence sits (file, lines, page, knowledge base, who may read it),
and the one way a citation is written, `path[#page=N]:Lx-Ly`.

`Span` is the place; `Passage` is a span with its text and scores. A search hit, a tool's evidence and an
answer's citation are each one of these with a few fields of their own, so a passage moves from the store
to the answer without being re-described by hand at every layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from kb_agent.store.records import Chunk


def cite(path: str, start_line: int, end_line: int, page: int | None = None) -> str:
    """`path[#page=N]:Lx-Ly`, the one form every citation is written in."""
    return f"{path}{f'#page={page}' if page else ''}:L{start_line}-{end_line}"


def is_record(text: str, start_line: int, end_line: int) -> bool:
    """A record (a JSONL or CSV row) is one cited line however many text lines it is rendered as; any other
    span has one text line per line number."""
    return len(text.split("\n")) != end_line - start_line + 1


class Span(BaseModel):
    source: str
    path: str
    start_line: int
    end_line: int
    page: int | None = None
    kb: str = ""
    doc_id: str = ""
    acl: list[str] = Field(default_factory=list, description="groups allowed to see it (empty = public)")

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line, self.page)

    @property
    def key(self) -> tuple[str, int, int, int | None]:
        """The span's identity: the same lines of the same file (and page) are the same evidence."""
        return (self.source, self.start_line, self.end_line, self.page)


class Passage(Span):
    text: str
    title: str = ""
    heading_path: list[str] = Field(default_factory=list, description="the headings the passage sits under")
    score: float = 0.0
    scores: dict[str, float] = Field(default_factory=dict, description="raw score in each retriever")
    # a Chinese query's words -> their English stems (the KB's learned lexicon): how an English passage is read
    # for that question; internal, never in an answer's JSON
    glossary: dict[str, list[str]] = Field(default_factory=dict, exclude=True)
    # an English page no Chinese page translates: only there is a general dictionary's sense worth reading for a
    # Chinese question (a translated page has its Chinese version to answer in the question's own words)
    untranslated: bool = Field(default=False, exclude=True)

    @property
    def is_record(self) -> bool:
        return is_record(self.text, self.start_line, self.end_line)

    @classmethod
    def from_chunk(cls, chunk: Chunk, **fields: Any):
        """The chunk's span and text; `fields` adds or overrides the subclass's own (score, tool, ...)."""
        base = {
            "source": chunk.source,
            "path": chunk.path,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "page": chunk.page,
            "kb": chunk.kb,
            "doc_id": chunk.doc_id,
            "acl": chunk.acl,
            "text": chunk.text,
            "title": chunk.title,
            "heading_path": list(chunk.heading_path),
        }
        return cls(**{**base, **fields})

    @classmethod
    def from_passage(cls, passage: Passage, **fields: Any):
        """Another passage (a search hit, say) as this type: the shared fields carried over."""
        shared = {name: getattr(passage, name) for name in Passage.model_fields}
        return cls(**{**shared, **fields})
