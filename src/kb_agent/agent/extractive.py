"""The answer without a generative model: the evidence sentences that best match the question, each
with its citation. Deterministic and fast; also the fallback when a model answer carries no citation."""

from __future__ import annotations

import re

from kb_agent.agent.rules import TICKET_RE
from kb_agent.text.tokenize import QUESTION_WORDS, tokenize
from kb_agent.tools.base import Evidence

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_MARKUP = re.compile(r"\{\s*#[^}]*\}|\*\*|__|^#+\s*|\{\*.*?\*\}")
_SHORT_RECORD_CHARS = 400
_QUESTION_TERMS = frozenset(tokenize(" ".join(QUESTION_WORDS)))


def extractive_answer(query: str, sources: list[Evidence], max_sentences: int = 3) -> str:
    """'' when no sentence covers at least half of the question's content terms (then the caller refuses)."""
    terms = set(tokenize(query)) - _QUESTION_TERMS
    if not terms:
        return ""
    needed = max(1, (len(terms) + 1) // 2)
    anchors = {key.upper() for key in TICKET_RE.findall(query)}  # a named ticket must appear in what we quote
    scored: list[tuple[float, int, int, str]] = []
    for n, source in enumerate(sources, start=1):
        # a short record (a ticket, a change entry) is one statement: keep its fields with its text
        units = [" — ".join(s.strip() for s in source.text.split("\n") if s.strip())] \
            if len(source.text) <= _SHORT_RECORD_CHARS else _SENTENCE.split(source.text)
        for position, raw in enumerate(units):
            sentence = _MARKUP.sub("", raw).strip(" #*>-|")
            if len(sentence) < 15:
                continue
            overlap = len(terms & set(tokenize(sentence)))
            if anchors and not any(a in sentence.upper() for a in anchors):
                continue
            if overlap >= needed:
                # rank: term overlap, then earlier sources, then earlier sentences
                scored.append((overlap / (1 + 0.1 * (n - 1)), -n, -position, f"{sentence} [{n}]"))
    if not scored:
        return ""
    best = sorted(scored, reverse=True)[:max_sentences]
    best.sort(key=lambda s: (-s[1], -s[2]))  # back in source order for readability
    return " ".join(s[3] for s in best)
