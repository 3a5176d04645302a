"""Where a line of a passage sits: the headings above it, the lines of its section, the code written just above
it. A translated heading is read with its English anchor's words."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import HEADING_ANCHOR
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence

_ANCHOR_WORDS = re.compile(r"\{\s*#([A-Za-z0-9_-]+)\s*\}")  # an English anchor (a translation keeps it)


def heading_text(heading: str) -> str:
    """A heading as read. A translated heading keeps its English anchor's words ("使用数据类 { #using-dataclasses }"
    -> "使用数据类 (using dataclasses)"): the translation's only record of the names the original says."""
    text = HEADING_ANCHOR.sub("", heading).lstrip("#").replace("*", "").strip()
    slug = _ANCHOR_WORDS.search(heading)
    if slug is None or not has_cjk(text):
        return text
    words = " ".join(w for w in re.split(r"[-_]+", slug.group(1)) if w)
    return f"{text} ({words})" if words else text


def section_of(evidence: Evidence, line: int) -> str:
    """The heading path a line of the passage sits under (the passage's own path, then the headings it opens
    on the way down), as `units_of` reads it: "The keys of the `dict` identify each example" is said under
    "Using the `openapi_examples` Parameter" twelve lines up."""
    if evidence.is_record:
        return ""
    headings = [heading_text(h) for h in evidence.heading_path]
    lines = evidence.text.split("\n")
    for at in _heading_rows(lines):
        if at >= line - evidence.start_line:
            break
        headings = under_heading(headings, lines[at].strip())
    return " > ".join(headings)


def section_lines(evidence: Evidence, line: int) -> str:
    """The passage's lines of the section `line` sits in: from the heading above it (or the passage's start) to
    the next heading (or its end)."""
    lines = evidence.text.split("\n")
    at = min(max(0, line - evidence.start_line), len(lines) - 1)
    starts = [0, *_heading_rows(lines)]
    start = max(i for i in starts if i <= at)
    end = min([i for i in starts if i > at] or [len(lines)])
    return "\n".join(lines[start:end])


def code_above(evidence: Evidence, line: int) -> str:
    """The nearest line above `line` in its section that writes code (backticks), or ""."""
    lines = evidence.text.split("\n")
    at = min(max(0, line - evidence.start_line), len(lines) - 1)
    start = max(i for i in [0, *_heading_rows(lines)] if i <= at)
    return next((lines[i] for i in range(at - 1, start - 1, -1) if "`" in lines[i]), "")


def _heading_rows(lines: list[str]) -> list[int]:
    """The rows of a passage's heading lines, outside code blocks (a `# comment` in a fence is no heading)."""
    rows, fenced = [], False
    for i, raw in enumerate(r.strip() for r in lines):
        if raw.startswith(("```", "~~~")):
            fenced = not fenced
        elif raw.startswith("#") and not fenced:
            rows.append(i)
    return rows


def under_heading(headings: list[str], line: str) -> list[str]:
    """The heading path after a heading line inside the passage (its level is its count of "#")."""
    text = heading_text(line)
    if headings and headings[-1] == text:  # the passage opens with the heading its path already ends in
        return headings
    level = len(line) - len(line.lstrip("#"))
    return [*headings[: max(0, level - 1)], text]
