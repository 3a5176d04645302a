"""Line-exact chunking: a chunk is always a contiguous run of whole lines of one section."""

from __future__ import annotations

import hashlib

from kb_agent.ingest.models import ParsedDocument, Section
from kb_agent.store.records import Chunk


def line_windows(lines: list[str], max_chars: int, overlap_chars: int) -> list[tuple[int, int]]:
    """Split `lines` into half-open index ranges of at most `max_chars` (a single longer line stands alone).

    A full window prefers to end after a blank line in its second half, so code and prose break at
    paragraph boundaries. Consecutive windows share up to `overlap_chars` of trailing lines.
    """
    if not lines:
        return []
    sizes = [len(line) + 1 for line in lines]
    windows: list[tuple[int, int]] = []
    start = 0
    n = len(lines)
    while start < n:
        end, total = start, 0
        while end < n and (end == start or total + sizes[end] <= max_chars):
            total += sizes[end]
            end += 1
        if end < n:  # window is full: try to break after a blank line in its second half
            half = start + (end - start) // 2
            for cut in range(end - 1, half, -1):
                if not lines[cut - 1].strip():
                    end = cut
                    break
        windows.append((start, end))
        if end >= n:
            break
        back, carried = end, 0
        while back - 1 > start and carried + sizes[back - 1] <= overlap_chars:
            back -= 1
            carried += sizes[back]
        start = back
    return windows


def _size(section: Section) -> int:
    return sum(len(line) + 1 for line in section.lines)


def merge_small_sections(sections: list[Section], max_chars: int) -> list[Section]:
    """Fold a section smaller than a quarter chunk into the one after it (same page, adjacent lines),
    so a heading with one sentence under it does not become a chunk of its own."""
    merged: list[Section] = []
    for section in sections:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and _size(prev) < max_chars // 4
            and _size(prev) + _size(section) <= max_chars
            and prev.page == section.page
            and prev.line_numbers
            and section.line_numbers
            and section.line_numbers[0] == prev.line_numbers[-1] + 1
        ):
            merged[-1] = Section(
                lines=prev.lines + section.lines,
                line_numbers=prev.line_numbers + section.line_numbers,
                heading_path=prev.heading_path,
                page=prev.page,
            )
        else:
            merged.append(section)
    return merged


LONG_LINE_FACTOR = 4  # a line up to 4 chunks long stays whole: a paragraph (an abstract) is one passage


def split_long_lines(section: Section, max_chars: int) -> Section:
    """A line longer than `LONG_LINE_FACTOR` chunks becomes pieces of at most `max_chars` (cut at a space
    when one is near), each a chunk of its own that cites the same line: a 15 MB minified line is never one
    15 MB passage. Shorter long lines stay whole: cutting SciFact's 535 abstracts over 2,000 characters in
    two cost 2.5 nDCG@10 points."""
    if all(len(line) <= max_chars * LONG_LINE_FACTOR for line in section.lines):
        return section
    lines: list[str] = []
    numbers: list[int] = []
    for line, number in zip(section.lines, section.line_numbers, strict=True):
        too_long = len(line) > max_chars * LONG_LINE_FACTOR
        while too_long and len(line) > max_chars:
            cut = line.rfind(" ", max_chars // 2, max_chars)
            cut = cut + 1 if cut > 0 else max_chars
            lines.append(line[:cut])
            numbers.append(number)
            line = line[cut:]
        lines.append(line)
        numbers.append(number)
    return Section(lines=lines, line_numbers=numbers, heading_path=section.heading_path, page=section.page)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def chunk_document(
    doc: ParsedDocument,
    *,
    kb: str,
    doc_id: str,
    source: str,
    path: str,
    acl: list[str],
    updated_at: float,
    max_chars: int,
    overlap_chars: int,
) -> list[Chunk]:
    chunks: list[Chunk] = []
    for merged in merge_small_sections(doc.sections, max_chars):
        section = split_long_lines(merged, max_chars)
        for a, b in line_windows(section.lines, max_chars, overlap_chars):
            text = "\n".join(section.lines[a:b])
            if not text.strip():
                continue
            chunks.append(
                Chunk(
                    kb=kb,
                    doc_id=doc_id,
                    chunk_id=f"{doc_id}::{len(chunks)}",
                    source=source,
                    path=path,
                    start_line=section.line_numbers[a],
                    end_line=section.line_numbers[b - 1],
                    text=text,
                    title=doc.title,
                    heading_path=list(section.heading_path),
                    page=section.page,
                    content_hash=content_hash(text),
                    acl=sorted(set(acl)),
                    updated_at=updated_at,
                    source_type=doc.source_type,
                    metadata=dict(doc.metadata),
                )
            )
    return chunks
