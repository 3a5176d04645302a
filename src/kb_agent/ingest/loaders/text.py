"""Loaders for line-based text: Markdown, plain text/rst, source code and config, JSONL records."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kb_agent.governance.access import NOBODY
from kb_agent.ingest.acl import AclError, groups_from_value
from kb_agent.ingest.loaders.front_matter import parse_front_matter
from kb_agent.ingest.models import LoaderError, ParsedDocument, Section
from kb_agent.text.decoding import decode_text

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


def decode(data: bytes) -> str:
    """UTF-8 (BOM tolerated), UTF-16/32 with a BOM; undecodable bytes become U+FFFD (text/decoding.py)."""
    return decode_text(data)


def split_lines(text: str) -> list[str]:
    """Lines as editors and ripgrep count them: split on \\n only, a trailing \\r dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def headed_sections(lines: list[str], levels: list[int | None], first_line: int = 1) -> list[Section]:
    """Group lines into sections at headings; `levels[i]` is the heading level of line i or None."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current = Section(lines=[], line_numbers=[], heading_path=[])
    for i, line in enumerate(lines):
        level = levels[i]
        if level is not None:
            has_body = any(s.strip() for s in current.lines if not _is_heading_line(s))
            if current.lines and has_body:
                sections.append(current)
                current = Section(lines=[], line_numbers=[], heading_path=[])
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, _heading_text(line)))
            current.heading_path = [title for _, title in path]
        current.lines.append(line)
        current.line_numbers.append(first_line + i)
    if current.lines:
        sections.append(current)
    return sections


def _is_heading_line(line: str) -> bool:
    return bool(_HEADING_RE.match(line))


def _heading_text(line: str) -> str:
    match = _HEADING_RE.match(line)
    return match.group(2).strip() if match else line.strip()


def _plain_value(value) -> bool:
    return isinstance(value, str | int | float) or (isinstance(value, list) and all(isinstance(i, str) for i in value))


def load_markdown(path: Path, data: bytes) -> list[ParsedDocument]:
    lines = split_lines(decode(data))
    front = parse_front_matter(lines, path.name)
    meta, skip = front.data, front.lines
    body = lines[skip:]
    levels: list[int | None] = []
    in_fence = False
    for line in body:
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            levels.append(None)
            continue
        match = None if in_fence else _HEADING_RE.match(line)
        levels.append(len(match.group(1)) if match else None)
    title = str(meta.get("title") or "")
    if not title:
        title = next((_heading_text(body[i]) for i, lvl in enumerate(levels) if lvl == 1), path.stem)
    return [
        ParsedDocument(
            source_type="markdown",
            title=title,
            sections=headed_sections(body, levels, first_line=skip + 1),
            acl=sorted(front.acl) if front.acl is not None else None,
            # other front-matter fields (source_url, confluence_id, ticket fields) travel with the chunks
            metadata={k: v for k, v in meta.items() if k != "title" and _plain_value(v)},
        )
    ]


def load_plain(path: Path, data: bytes, source_type: str) -> list[ParsedDocument]:
    lines = split_lines(decode(data))
    section = Section(lines=lines, line_numbers=list(range(1, len(lines) + 1)))
    # authors put front matter in .txt/.rst too: its acl narrows the file like in Markdown
    acl = parse_front_matter(lines, path.name).acl if source_type == "text" else None
    return [
        ParsedDocument(
            source_type=source_type, title=path.name, sections=[section], acl=sorted(acl) if acl is not None else None
        )
    ]


def load_jsonl(path: Path, data: bytes) -> list[ParsedDocument]:
    """One document per record `{"_id", "title", "text", "metadata"}`; citations point at its line."""
    docs: list[ParsedDocument] = []
    left_out: list[tuple[str, str]] = []
    first_line: dict[str, int] = {}  # record key -> the line that used it first

    def skip(line_no: int, why: str) -> None:
        left_out.append((f"L{line_no}", f"line {line_no}: {why}"))

    for line_no, raw in enumerate(split_lines(decode(data)), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            skip(line_no, f"not valid JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            skip(line_no, "not a JSON object")
            continue
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            skip(line_no, 'no "text" string')
            continue
        key = str(record.get("_id") or record.get("id") or f"L{line_no}")
        if key in first_line:  # two records cannot share a citation id: the first one stays
            skip(line_no, f"duplicate _id {key!r} (first on line {first_line[key]}); this record is skipped")
            continue
        first_line[key] = line_no
        title = str(record.get("title") or "")
        meta: dict = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
        try:
            acl = _record_acl(record, meta, f"line {line_no}")
        except AclError as exc:
            docs.append(ParsedDocument("record", title, [], key=key, error=str(exc)))
            continue
        extra = {k: v for k, v in record.items() if k not in ("_id", "id", "title", "text", "metadata")}
        meta = {**extra, **meta, "record_id": key}
        record_lines = split_lines(text)
        # short scalar fields (ticket key, release, status...) are part of the cited line: make them searchable
        fields = [
            f"{k}: {v}"
            for k, v in extra.items()
            if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v).strip() and len(str(v)) <= 200
        ]
        if fields:
            record_lines = [*record_lines, " · ".join(fields)]
        section = Section(lines=record_lines, line_numbers=[line_no] * len(record_lines))
        docs.append(ParsedDocument("record", title, [section], key=key, acl=acl, metadata=meta))
    if left_out and not docs:
        raise LoaderError(f"no valid JSONL records ({len(left_out)} malformed lines)")
    if docs:
        docs[0].skipped_records = left_out
    return docs


def _record_acl(record: dict, meta: dict, where: str) -> list[str] | None:
    """A record's `acl` (top level or in `metadata`, any case) narrows its file's ACL; several narrow each other."""
    values = [
        v
        for container in (record, meta)
        for k, v in container.items()
        if isinstance(k, str) and k.strip().lower() in ("acl", "acls")
    ]
    if not values:
        return None
    groups = frozenset.intersection(*(groups_from_value(v, f"{where}: record") for v in values))
    return sorted(groups) if groups else [NOBODY]
