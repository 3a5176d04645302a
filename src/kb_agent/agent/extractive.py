"""The answer without a generative model: the evidence sentences that best cover the question, each cited
to its own lines. Also the coverage test that refuses an unanswerable question before any model call.

Units are lines of the evidence (a Markdown list item, a table row, a paragraph line), split into sentences
when long, a short trailing clause ("Defaults to `600`.") kept with the sentence it completes. Include
markers, admonition fences, link menus and headings are not answers. Units are ranked by how many of the
question's key terms they hold, then by the embedder's similarity (when one is at hand) and by language."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from kb_agent.agent.claims import Sentence, content_terms, split_sentences
from kb_agent.agent.rules import TICKET_RE
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence

COVERAGE = 0.5  # share of the question's key terms a unit must hold to be an answer
_NOISE = re.compile(r"^\{\*.*\*\}$|^/{3}|^</?\w+[^>]*>$|^\|?[\s:|-]+\|?$|^[-=*_]{3,}$")
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
_ANCHOR = re.compile(r"\s*\{\s*#[^}]*\}")
_BULLET = re.compile(r"^(?:[*+-]|\d{1,3}[.)])\s+")
_MIN_CHARS, _MAX_UNIT_CHARS, _SHORT_TAIL = 15, 400, 45

Embed = Callable[[str, list[str]], list[float]]  # (question, texts) -> cosine similarities


@dataclass
class Unit:
    text: str
    source: int  # 0-based
    position: int
    terms: set[str]
    coverage: float = 0.0
    score: float = 0.0


def key_terms(question: str) -> set[str]:
    return content_terms(question)


def _units(source: int, evidence: Evidence) -> list[Unit]:
    lines = evidence.text.split("\n")
    if len(lines) != evidence.end_line - evidence.start_line + 1:  # a record: one statement
        text = " — ".join(line.strip() for line in lines if line.strip())[:_MAX_UNIT_CHARS]
        return [Unit(text, source, 0, content_terms(text))]
    units: list[Unit] = []
    fenced = False
    for line in lines:
        raw = line.strip()
        if raw.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not raw or raw.startswith("#") or _NOISE.match(raw) or _menu(raw):
            continue
        cleaned = _BULLET.sub("", _ANCHOR.sub("", raw).strip(" >"))
        pieces = [cleaned] if fenced or len(cleaned) <= 200 else [s.text for s in split_sentences(cleaned)]
        merged: list[str] = []
        for piece in pieces:  # "…responses. Defaults to `600`." stays one answer
            if merged and len(piece) < _SHORT_TAIL:
                merged[-1] += " " + piece
            else:
                merged.append(piece)
        for piece in merged:
            if len(piece) >= _MIN_CHARS:
                units.append(Unit(piece[:_MAX_UNIT_CHARS], source, len(units), content_terms(piece)))
    return units


def _menu(line: str) -> bool:
    """Navigation and link lists: several links and few words of their own."""
    links = _LINK.findall(line)
    return len(links) >= 2 and len(_LINK.sub("", line).split()) < 6


def rank(question: str, sources: list[Evidence], embed: Embed | None = None) -> list[Unit]:
    """Units holding at least COVERAGE of the question's key terms, best first."""
    terms = key_terms(question)
    if not terms:
        return []
    needed = max(1, math.ceil(COVERAGE * len(terms)))
    anchors = {key.upper() for key in TICKET_RE.findall(question)}  # a named ticket must be in what we quote
    zh = has_cjk(question)
    found: list[Unit] = []
    for index, evidence in enumerate(sources):
        context = content_terms(f"{evidence.title} {evidence.path}")  # a unit speaks within its page
        for unit in _units(index, evidence):
            held = len(terms & (unit.terms | context))
            if held < needed or (anchors and not any(a in unit.text.upper() for a in anchors)):
                continue
            unit.coverage = held / len(terms)
            unit.score = unit.coverage + (0.15 if has_cjk(unit.text) == zh else 0.0) - 0.03 * index
            found.append(unit)
    found.sort(key=lambda u: -u.score)
    if embed is not None and found:
        top = found[:12]
        try:
            similarities = embed(question, [u.text for u in top])
        except Exception:  # the embedder is a second opinion; without it the lexical order stands
            similarities = []
        for unit, similarity in zip(top, similarities, strict=False):
            unit.score += 0.5 * float(similarity)
        found = sorted(top, key=lambda u: -u.score) + found[12:]
    return found


def covers(question: str, sources: list[Evidence]) -> bool:
    """Does the evidence hold the question's key terms - half of them together, a third in one source? If
    not, the question is refused without a model call (parts of a multi-part question may sit apart)."""
    terms = key_terms(question)
    if not terms:
        return bool(sources)
    union: set[str] = set()
    best = 0
    for e in sources:
        held = terms & (content_terms(e.text) | content_terms(f"{e.title} {e.path}"))
        union |= held
        best = max(best, len(held))
    return len(union) >= math.ceil(COVERAGE * len(terms)) and best >= math.ceil(len(terms) / 3)


def extractive_sentences(question: str, sources: list[Evidence], embed: Embed | None = None,
                         max_sentences: int = 3) -> list[Sentence]:
    """The best 1-3 units, without near-duplicates, each citing its source; [] when none covers the question."""
    ranked = rank(question, sources, embed)
    chosen: list[Unit] = []
    for unit in ranked:
        if len(chosen) >= max_sentences or (chosen and unit.score < 0.8 * chosen[0].score):
            break
        if any(_similar(unit.terms, other.terms) for other in chosen):
            continue
        chosen.append(unit)
    chosen.sort(key=lambda u: (u.source, u.position))  # back in reading order
    return [Sentence(u.text, [u.source + 1]) for u in chosen]


def _similar(a: set[str], b: set[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= 0.7
