"""Retrieval tools over the indexed knowledge bases; the caller's ACL travels in the ToolContext."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from kb_agent.retrieval.types import Mode, SearchHit
from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext


def hit_to_evidence(hit: SearchHit, tool: str) -> Evidence:
    return Evidence(
        source=hit.source, path=hit.path, start_line=hit.start_line, end_line=hit.end_line, text=hit.text,
        score=hit.score, tool=tool, kb=hit.kb, doc_id=hit.doc_id, title=hit.title, page=hit.page,
        scores=hit.scores, acl=hit.acl,
    )


class SearchInput(BaseModel):
    query: str = Field(min_length=1, max_length=1000, description="What to look for")
    top_k: int = Field(default=6, ge=1, le=30, description="How many passages to return")
    hops: int = Field(default=1, ge=1, le=2,
                      description="2 = also fetch documents the top passages name (multi-hop questions)")


class _SearchTool(Tool):
    mode: ClassVar[Mode]
    Input = SearchInput

    def run(self, args: SearchInput, ctx: ToolContext) -> list[Evidence]:
        response = ctx.searcher.search(args.query, access=ctx.access, mode=self.mode, k=args.top_k,
                                      hops=args.hops)
        ctx.notices.extend(n for n in response.notices if n not in ctx.notices)
        return [hit_to_evidence(h, self.name) for h in response.hits]


class HybridSearch(_SearchTool):
    name = "hybrid_search"
    description = "Keyword (BM25) and semantic search fused by rank; the default for most questions."
    mode = "hybrid"


class VectorSearch(_SearchTool):
    name = "vector_search"
    description = "Semantic search: finds passages that mean the same thing in other words (or language)."
    mode = "dense"


class GrepSearch(_SearchTool):
    name = "grep_search"
    description = ("Exact text search (ripgrep) with ±10 lines of context: identifiers, error messages, "
                   "config keys, ticket keys.")
    mode = "grep"


class ReadFileInput(BaseModel):
    path: str = Field(min_length=1, max_length=1000, description="Path as shown in citations")
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    page: int | None = Field(default=None, ge=1, description="PDF page (line numbers restart per page)")


EXTRACTED_SUFFIXES = (".pdf", ".docx", ".xlsx", ".html", ".htm", ".xhtml")


class ReadFile(Tool):
    name = "read_file"
    description = "Read lines of an indexed file (by its cited path), e.g. to see more around a passage."
    Input = ReadFileInput
    max_lines: ClassVar[int] = 200

    def run(self, args: ReadFileInput, ctx: ToolContext) -> list[Evidence]:
        for kb in ctx.kbs:  # only files the index knows and the caller may see: no arbitrary paths
            for record in kb.catalog.visible_files(ctx.access):
                if record.path == args.path:
                    return [self._read(record, args, kb)]
        raise ToolArgsError(f"read_file: no indexed file {args.path!r} visible to the caller")

    def _read(self, record, args: ReadFileInput, kb) -> Evidence:
        if record.path.lower().endswith(EXTRACTED_SUFFIXES):
            lines = self._extracted_lines(kb, record.source, args.page)
        else:
            try:
                with open(record.source, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().split("\n")
            except OSError as exc:
                raise ToolArgsError(f"read_file: {args.path} cannot be read ({exc.strerror})") from exc
            if lines and lines[-1] == "":
                lines.pop()
        start = args.start_line or 1
        end = min(args.end_line or start + self.max_lines - 1, len(lines), start + self.max_lines - 1)
        if start > len(lines) or end < start:
            raise ToolArgsError(f"read_file: {args.path} has {len(lines)} lines")
        text = "\n".join(line.rstrip("\r") for line in lines[start - 1 : end])
        return Evidence(source=record.source, path=record.path, start_line=start, end_line=end, text=text,
                        score=1.0, tool=self.name, kb=kb.name, doc_id=record.path, acl=record.acl, page=args.page)

    @staticmethod
    def _extracted_lines(kb, source: str, page: int | None) -> list[str]:
        """Formats whose citations refer to extracted text are rebuilt from their line-exact chunks."""
        lines: dict[int, str] = {}
        for stored in kb.catalog.chunks_of_source(source):
            chunk = stored.chunk
            if (chunk.page or None) != page and not (page is None and chunk.page == 1):
                continue
            for offset, line in enumerate(chunk.text.split("\n")):
                lines.setdefault(chunk.start_line + offset, line)
        if not lines:
            raise ToolArgsError("read_file: no text for that page" if page else "read_file: no extracted text")
        return [lines.get(n, "") for n in range(1, max(lines) + 1)]
