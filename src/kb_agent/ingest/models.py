"""Types that flow from loaders through the chunker into the stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Section:
    """A run of lines that belongs under one heading (or one page, sheet, record).

    `line_numbers[i]` is the 1-based line, in the source (or in its extracted text for PDF/DOCX/HTML),
    that `lines[i]` comes from. For plain-text formats `"\\n".join(lines[a:b])` is exactly lines
    `line_numbers[a]..line_numbers[b-1]` of the file.
    """

    lines: list[str]
    line_numbers: list[int]
    heading_path: list[str] = field(default_factory=list)
    page: int | None = None


@dataclass
class ParsedDocument:
    """What a loader makes of one file, or of one record of a JSONL file."""

    source_type: str
    title: str
    sections: list[Section]
    key: str = ""  # record id inside a multi-record file ("" for whole-file documents)
    acl: list[str] | None = None  # from front matter or a record's `acl`; None = not set
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # a record that cannot be indexed (e.g. an unreadable acl): reported, skipped
    # other records of the same file the loader left out, (key, reason): reported by the indexer
    skipped_records: list[tuple[str, str]] = field(default_factory=list)


class LoaderError(Exception):
    """A file could not be parsed; the indexer records it as skipped and moves on."""
