"""What the answer model reads: each source's lines around the question's terms, numbered, under the headings
the source sits under, fenced as data. For a plainly simple question, only the lines the extractive ranker
found best, each with its neighbours: on a CPU the prompt's length is the answer's latency."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import content_terms
from kb_agent.agent.evidence_sections import heading_text
from kb_agent.agent.evidence_units import Unit, is_prose
from kb_agent.agent.quote_selection import similar
from kb_agent.tools.base import Evidence

_CONTEXT_LINES = 2
_SECTION_CHARS = 100


def render_sources(sources: list[Evidence], max_chars: int, question: str = "") -> str:
    """Each source as numbered lines: the lines around the question's terms when it is too long to send whole."""
    terms = content_terms(question)
    blocks = []
    for n, e in enumerate(sources, start=1):
        blocks.append(f"{_opening(n, e)}\n{_focused(e, max_chars, terms)}\n</source>")
    return "<sources>\n" + "\n".join(blocks) + "\n</sources>"


def _opening(n: int, e: Evidence) -> str:
    """A source's tag: its number (what the model cites), path and section. Its line range is left out: every
    line carries its own number, and on a CPU each token of the prompt is time before the first word."""
    return f'<source id="{n}" path="{e.path}"{_section(e)}>'


def _section(e: Evidence) -> str:
    """The headings the source sits under: a window of lines far from its heading ("That tells the browser to
    …") still says what it is about."""
    # a heading is data too: no quote or angle bracket of it may close the attribute or the source
    headings = (re.sub(r'["<>]', "", heading_text(h)).strip() for h in e.heading_path)
    path = " > ".join(h for h in headings if h)
    if not path:
        return ""
    path = path if len(path) <= _SECTION_CHARS else "… " + path[-_SECTION_CHARS:]
    return f' section="{path}"'


def _focused(e: Evidence, max_chars: int, terms: set[str]) -> str:
    lines = e.text.split("\n")
    exact = not e.is_record
    # a blank line says nothing and costs tokens ("" here, left out by _joined); the numbers keep the gap visible
    numbered = [
        "" if not line.strip() else f"{e.start_line + i}| {line}" if exact else line for i, line in enumerate(lines)
    ]
    if len(e.text) <= max_chars or not terms:
        text = _joined(numbered, range(len(numbered)))
        return text if len(text) <= max_chars else text[:max_chars] + " …"
    scores = [len(terms & content_terms(line)) for line in lines]
    order = sorted((i for i, s in enumerate(scores) if s), key=lambda i: (-scores[i], i))
    keep: set[int] = set()
    for i in order:
        window = _widest_fitting(numbered, i, keep, max_chars)
        if window is None:
            if not keep:  # the best line alone is too long: its part around the question's terms
                return _around(numbered[i], terms, max_chars)
            break
        keep |= window
    if not keep:
        return _joined(numbered, range(len(numbered)))[:max_chars] + " …"
    return _joined(numbered, sorted(keep))


def _joined(numbered: list[str], kept) -> str:
    """The kept lines in order, blank ones left out, "…" where a line with text was skipped."""
    out: list[str] = []
    previous = None
    for j in kept:
        if not numbered[j]:
            continue
        if previous is not None and any(numbered[k] for k in range(previous + 1, j)):
            out.append("…")
        out.append(numbered[j])
        previous = j
    return "\n".join(out)


def _widest_fitting(numbered: list[str], i: int, keep: set[int], max_chars: int) -> set[int] | None:
    """Line i with up to _CONTEXT_LINES around it, as wide as still fits beside `keep`: a narrow budget keeps
    the line itself."""
    for radius in range(_CONTEXT_LINES, -1, -1):
        window = set(range(max(0, i - radius), min(len(numbered), i + radius + 1)))
        if sum(len(numbered[j]) + 1 for j in keep | window) <= max_chars:
            return window
    return None


def _around(line: str, terms: set[str], max_chars: int) -> str:
    """`max_chars` of one long line, from a little before the first of the question's terms it holds."""
    prefix, sep, body = line.partition("| ")
    if not sep or not prefix.isdigit():
        prefix, sep, body = "", "", line
    lowered = body.lower()
    first = min((p for t in terms if (p := lowered.find(t)) >= 0), default=0)
    start = max(0, first - max_chars // 4)
    cut = body[start : start + max_chars]
    return f"{prefix}{sep}{'… ' if start else ''}{cut}{' …' if start + max_chars < len(body) else ''}"


RANKED_LINES = 5  # the ranker's best lines the model reads, each with a line of context either side
_NEIGHBOUR_CHARS = 240  # a neighbour is context: a paragraph-long one is cut


def ranked_sources(sources: list[Evidence], ranked: list[Unit], max_chars: int) -> str | None:
    """The extractive ranker's best lines (rank order, up to RANKED_LINES and `max_chars`), each with the line
    before and after it, grouped under their sources in reading order; a source with none is left out but
    keeps its number. None when the ranker found no line: the windows around the terms serve then."""
    shown: dict[int, dict[int, str]] = {}  # source -> line -> text
    used = taken = 0
    chosen: list[Unit] = []
    for unit in ranked:
        if taken >= RANKED_LINES:
            break
        if any(similar(unit.terms, other.terms) for other in chosen):
            continue  # the same sentence on another page (a copy, an older version) tells the model nothing new
        e = sources[unit.source]
        lines = e.text.split("\n")
        here = shown.setdefault(unit.source, {})
        record = {} if here else {0: unit.text}  # a record (a JSONL / CSV row): its one statement, unnumbered
        added = record if e.is_record else _with_neighbours(unit, lines, here)
        cost = sum(len(text) + 8 for text in added.values())
        if taken and used + cost > max_chars:
            continue
        here.update(added)
        chosen.append(unit)
        used, taken = used + cost, taken + 1
    if not taken:
        return None
    blocks = []
    for index in sorted(n for n, lines in shown.items() if lines):
        e = sources[index]
        exact = not e.is_record
        out, previous = [], None
        for j in sorted(shown[index]):
            if previous is not None and j != previous + 1:
                out.append("…")
            out.append(f"{e.start_line + j}| {shown[index][j]}" if exact else shown[index][j])
            previous = j
        blocks.append(_opening(index + 1, e) + "\n" + "\n".join(out) + "\n</source>")
    return "<sources>\n" + "\n".join(blocks) + "\n</sources>"


def _with_neighbours(unit: Unit, lines: list[str], shown: dict[int, str]) -> dict[int, str]:
    """The unit's line (only its own sentence when the line is a long paragraph; a code line with what its
    annotation calls it) and the nearest line of text either side (not a heading: the section says those),
    those not shown yet."""
    own = lines[unit.line].rstrip()
    if len(own) > 2 * _NEIGHBOUR_CHARS:
        own = f"… {unit.text} …"
    if unit.note:
        own = f"{own}    ← ({unit.note})"
    added = {} if unit.line in shown else {unit.line: own}
    for step in (-1, 1):  # the paragraph before and after, past blank lines, fences and admonition marks
        j = unit.line + step
        while 0 <= j < len(lines) and not is_prose(lines[j]) and abs(j - unit.line) < 4:
            j += step
        if 0 <= j < len(lines) and j not in shown and is_prose(lines[j]):
            text = lines[j].rstrip()
            added[j] = text if len(text) <= _NEIGHBOUR_CHARS else text[:_NEIGHBOUR_CHARS] + " …"
    return added
