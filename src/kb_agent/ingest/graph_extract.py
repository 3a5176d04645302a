"""What the knowledge graph learns from one file's stored chunks: folders, headings, Markdown and wiki
links, ticket keys with typed relations (from record fields or from text), Confluence page parents.

Extraction reads the line-exact chunks, so every edge carries the exact span that asserts it."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from kb_agent.store.graph import TICKET, Edge, ticket_node
from kb_agent.store.records import Chunk
from kb_agent.store.spans import is_record

_MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKI_LINK = re.compile(r"\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")
# "blocks LANG-12", "is blocked by X-3", "subtask of ABC-1", "clones KEY-9", "relates to KEY-4"
_TEXT_RELATION = re.compile(
    r"\b(is blocked by|blocked by|blocks|is cloned by|clones|cloned from|duplicates|is duplicated by|"
    r"relates to|related to|subtask of|sub-task of|parent(?: ticket| issue)?|child of|epic)\s*:?\s*"
    r"([A-Z][A-Z0-9]{1,9}-\d{1,7})",
    re.I,
)
_RELATION_NAMES = {
    "is blocked by": "blocked_by",
    "blocked by": "blocked_by",
    "blocks": "blocks",
    "is cloned by": "cloned_by",
    "clones": "clones",
    "cloned from": "clones",
    "duplicates": "duplicates",
    "is duplicated by": "duplicated_by",
    "relates to": "relates",
    "related to": "relates",
    "subtask of": "parent",
    "sub-task of": "parent",
    "parent": "parent",
    "parent ticket": "parent",
    "parent issue": "parent",
    "child of": "parent",
    "epic": "epic",
}
# Jira-shaped record fields -> relation from the record's ticket to the field's ticket(s)
_FIELD_RELATIONS = {
    "parent": "parent",
    "epic": "epic",
    "subtasks": "subtask",
    "clones": "clones",
    "blocks": "blocks",
    "blocked_by": "blocked_by",
    "relates": "relates",
    "duplicates": "duplicates",
}


def file_node(path: str) -> str:
    return f"file:{path}"


def extract(path: str, chunks: list[Chunk], resolve_link) -> list[Edge]:
    """Edges asserted by one file. resolve_link(from_path, target) -> indexed path or None."""
    edges: list[Edge] = []
    acl = chunks[0].acl if chunks else []
    parts = path.split("/")
    for depth in range(1, len(parts)):  # folder CONTAINS folder/file
        parent, child = "/".join(parts[:depth]), "/".join(parts[: depth + 1])
        tail = file_node(path) if depth == len(parts) - 1 else f"dir:{child}"
        head = f"dir:{parent}"
        edges.append(Edge(head, "contains", tail, acl=acl))
    seen_headings = set()
    for chunk in chunks:
        own = _own_ticket(chunk)
        for heading in chunk.heading_path:
            if heading and heading not in seen_headings:
                seen_headings.add(heading)
                edges.append(
                    Edge(
                        file_node(path),
                        "has_heading",
                        f"heading:{heading.lower()}",
                        path,
                        chunk.start_line,
                        chunk.start_line,
                        heading,
                        acl,
                        chunk.page,
                    )
                )
        edges.extend(_record_edges(chunk))
        for line_no, line in _lines(chunk):
            span: dict[str, Any] = {
                "path": path,
                "start_line": line_no,
                "end_line": line_no,
                "text": line.strip()[:500],
                "acl": chunk.acl,
                "page": chunk.page,
            }
            for target in _MD_LINK.findall(line) + [f"[[{w.strip()}]]" for w in _WIKI_LINK.findall(line)]:
                resolved = resolve_link(path, target)
                if resolved and resolved != path:
                    edges.append(Edge(file_node(path), "links_to", file_node(resolved), **span))
                elif resolved is None and _local(target):  # kept so that indexing the target later links it
                    edges.append(Edge(file_node(path), "dead_link", f"missing:{target}", **span))
            relations = {
                m.group(2).upper(): _RELATION_NAMES.get(m.group(1).lower(), "relates")
                for m in _TEXT_RELATION.finditer(line)
            }
            for key in dict.fromkeys(TICKET.findall(line)):
                if own and key == own:
                    continue
                edges.append(Edge(file_node(path), "mentions", ticket_node(key), **span))
                if own and key in relations:
                    edges.append(Edge(ticket_node(own), relations[key], ticket_node(key), **span))
    return edges


def _local(target: str) -> bool:
    return "://" not in target and not target.startswith(("mailto:", "#"))


def _lines(chunk: Chunk) -> Iterable[tuple[int, str]]:
    lines = chunk.text.split("\n")
    if not is_record(chunk.text, chunk.start_line, chunk.end_line):
        return zip(range(chunk.start_line, chunk.end_line + 1), lines, strict=True)
    return ((chunk.start_line, line) for line in lines)  # a record: every line cites the record's line


def _own_ticket(chunk: Chunk) -> str | None:
    for name in ("issue_key", "key", "ticket"):
        value = chunk.metadata.get(name)
        if isinstance(value, str) and TICKET.fullmatch(value.strip().upper()):
            return value.strip().upper()
    return None


def _record_edges(chunk: Chunk) -> list[Edge]:
    """A record that is a ticket: described_in its span, plus typed relations from its fields."""
    own = _own_ticket(chunk)
    meta = chunk.metadata
    span: dict[str, Any] = {
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "text": chunk.text[:500],
        "acl": chunk.acl,
        "page": chunk.page,
    }
    edges: list[Edge] = []
    if own:
        edges.append(Edge(ticket_node(own), "described_in", file_node(chunk.path), **span))
        for name, rel in _FIELD_RELATIONS.items():
            for key in _keys(meta.get(name)):
                edges.append(Edge(ticket_node(own), rel, ticket_node(key), **span))
        for link in meta.get("issuelinks") or []:
            if isinstance(link, dict) and _keys(link.get("key")):
                rel = str(link.get("type") or "relates").lower().replace(" ", "_")
                edges.append(Edge(ticket_node(own), rel, ticket_node(_keys(link["key"])[0]), **span))
    parent = meta.get("confluence_parent")
    if isinstance(parent, str) and parent:
        edges.append(Edge(file_node(chunk.path), "child_of", f"page:{parent}", **span))
    page_id = meta.get("confluence_id")
    if isinstance(page_id, str | int) and page_id:
        edges.append(Edge(f"page:{page_id}", "described_in", file_node(chunk.path), **span))
    return edges


def _keys(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [v.strip().upper() for v in values if isinstance(v, str) and TICKET.fullmatch(v.strip().upper())]


def link_resolver(paths: set[str], stems: dict[str, str]):
    """Markdown links resolve relative to the linking file; [[WikiLinks]] by file stem or title."""

    def resolve(from_path: str, target: str) -> str | None:
        if target.startswith("[[") and target.endswith("]]"):
            return stems.get(target[2:-2].strip().lower())
        target = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not target or "://" in target or target.startswith("mailto:"):
            return None
        base = from_path.split("/", 1)[0] if target.startswith("/") else posixpath.dirname(from_path)
        candidate = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
        for option in (candidate, candidate + ".md", posixpath.join(candidate, "index.md")):
            if option in paths:
                return option
        return None

    return resolve
