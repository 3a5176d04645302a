"""read_file and local_file_qa: files are reached only through the index, never through the raw path a
caller (or a model) supplies. A path must name an indexed file the caller may see, still inside its root."""

from __future__ import annotations

import fnmatch
import os
from typing import ClassVar

from pydantic import BaseModel, Field

from kb_agent.store.catalog import FileRecord, lines_of
from kb_agent.store.live import StaleFile, indexed_lines, read_indexed_bytes
from kb_agent.text.decoding import has_wide_bom
from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext, ToolDenied

EXTRACTED_SUFFIXES = (".pdf", ".docx", ".xlsx", ".html", ".htm", ".xhtml")
_BINARY_PROBE = 8192


class ReadFileInput(BaseModel):
    path: str = Field(min_length=1, max_length=1000, description="Path as shown in citations")
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    page: int | None = Field(default=None, ge=1, description="PDF page (line numbers restart per page)")


def check_path_shape(path: str) -> None:
    """Refuse traversal before any lookup: the answer is the same whether or not such a file exists."""
    parts = path.replace("\\", "/").split("/")
    if "\x00" in path or ".." in parts:
        raise ToolDenied("read_file: '..' and NUL are not allowed in paths")


def visible_file(ctx: ToolContext, path: str):
    """(kb, record) of an indexed file the caller may see; absolute paths only if they are an indexed source."""
    check_path_shape(path)
    for kb in ctx.kbs:
        record = kb.catalog.file_by_path(path)
        if record is not None and ctx.access.allows(record.acl):
            return kb, record
    # the same message whether the file is missing or hidden: existence is not disclosed
    raise ToolArgsError(f"read_file: no indexed file {path!r} visible to the caller")


def open_checked(record: FileRecord, max_bytes: int) -> list[str]:
    """Lines of a text file exactly as it was indexed: a file changed, swapped or re-pointed since is refused
    (its ACL was derived from what was indexed), as are huge and binary files."""
    real, root = os.path.realpath(record.source), os.path.realpath(record.root)
    # (a symlink indexed into another root of the KB keeps its recorded target)
    if real != record.real_path and os.path.commonpath([real, root]) != root:
        raise ToolDenied(f"read_file: {record.path} now resolves outside its indexed root")
    try:
        data = read_indexed_bytes(record, max_bytes)
    except StaleFile as exc:
        raise ToolDenied(f"read_file: {exc}") from None
    except ValueError as exc:
        raise ToolArgsError(f"read_file: {exc}") from None
    except OSError as exc:
        raise ToolArgsError(f"read_file: {record.path} cannot be read ({exc.strerror})") from exc
    if b"\x00" in data[:_BINARY_PROBE] and not has_wide_bom(data):
        raise ToolArgsError(f"read_file: {record.path} is a binary file")
    return indexed_lines(data)


def numbered(evidence: Evidence) -> str:
    lines = evidence.text.split("\n")
    width = len(str(evidence.end_line))
    if evidence.is_record:  # all of it is one cited line
        return "\n".join(f"{evidence.start_line:>{width}}| {line}" for line in lines)
    return "\n".join(f"{n:>{width}}| {line}" for n, line in enumerate(lines, start=evidence.start_line))


class ReadFile(Tool):
    name = "read_file"
    description = "Read lines of an indexed file (by its cited path), e.g. to see more around a passage."
    Input = ReadFileInput
    timeout_ms = 5_000
    max_lines: ClassVar[int] = 200

    def run(self, args: ReadFileInput, ctx: ToolContext) -> list[Evidence]:
        kb, record = visible_file(ctx, args.path)
        if record.path.lower().endswith(EXTRACTED_SUFFIXES):
            lines = self._extracted_lines(kb, record.source, args.page)
        else:
            lines = open_checked(record, ctx.settings.read_file_max_bytes)
        start = args.start_line or 1
        end = min(args.end_line or start + self.max_lines - 1, len(lines), start + self.max_lines - 1)
        if start > len(lines) or end < start:
            raise ToolArgsError(f"read_file: {args.path} has {len(lines)} lines")
        return [
            Evidence(
                source=record.source,
                path=record.path,
                start_line=start,
                end_line=end,
                text="\n".join(lines[start - 1 : end]),
                score=1.0,
                tool=self.name,
                kb=kb.name,
                doc_id=record.path,
                acl=record.acl,
                page=args.page,
            )
        ]

    @staticmethod
    def _extracted_lines(kb, source: str, page: int | None) -> list[str]:
        """Formats whose citations refer to extracted text are rebuilt from their line-exact chunks."""
        lines = lines_of(
            s
            for s in kb.catalog.chunks_of_source(source)
            if (s.chunk.page or None) == page or (page is None and s.chunk.page == 1)
        )
        if not lines:
            raise ToolArgsError("read_file: no text for that page" if page else "read_file: no extracted text")
        return [lines.get(n, "") for n in range(1, max(lines) + 1)]


class LocalFileQAInput(BaseModel):
    pattern: str = Field(
        min_length=1, max_length=300, description="File name, glob (*.md, docs/**/auth*) or path fragment"
    )
    question: str | None = Field(default=None, max_length=1000, description="What to answer from those files")
    max_files: int = Field(default=5, ge=1, le=20)


class LocalFileQA(Tool):
    name = "local_file_qa"
    description = (
        "Find indexed files by name, glob or path fragment and return the passages of those files that "
        "answer the question (or their beginning)."
    )
    Input = LocalFileQAInput
    timeout_ms = 10_000

    def run(self, args: LocalFileQAInput, ctx: ToolContext) -> list[Evidence]:
        matches = self._match(args.pattern, ctx, args.max_files)
        if not matches:
            raise ToolArgsError(f"local_file_qa: no indexed file matches {args.pattern!r}")
        wanted = {(kb.name, record.source) for kb, record in matches}
        out: list[Evidence] = []
        if args.question:
            response = ctx.require_searcher().search(args.question, access=ctx.access, mode="bm25", k=200)
            for hit in response.hits:
                if (hit.kb, hit.source) in wanted and sum(e.source == hit.source for e in out) < 2:
                    out.append(Evidence.from_passage(hit, tool=self.name))
        answered = {e.source for e in out}
        for kb, record in matches:  # files the question's words miss still show their beginning
            if record.source in answered:
                continue
            chunks = kb.catalog.chunks_of_source(record.source)
            if chunks and ctx.access.allows(chunks[0].chunk.acl):
                out.append(Evidence.from_chunk(chunks[0].chunk, kb=kb.name, tool=self.name))
        return out

    @staticmethod
    def _match(pattern: str, ctx: ToolContext, limit: int) -> list[tuple]:
        check_path_shape(pattern)
        glob = any(ch in pattern for ch in "*?[")
        found: list[tuple] = []
        for kb in ctx.kbs:
            if glob:
                lowered = pattern.lower()
                candidates = [
                    f
                    for f in kb.catalog.visible_files(ctx.access)
                    if fnmatch.fnmatch(f.path.lower(), lowered)
                    or fnmatch.fnmatch(os.path.basename(f.path).lower(), lowered)
                    or fnmatch.fnmatch(f.path.lower(), f"*/{lowered}")
                ]
                candidates.sort(key=lambda f: (len(f.path), f.path))
            else:
                candidates = [f for f in kb.catalog.find_files(pattern, limit * 20) if ctx.access.allows(f.acl)]
            found.extend((kb, f) for f in candidates)
        return found[:limit]
