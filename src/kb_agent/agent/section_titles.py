"""Headings that answer for their lines: a release note's version and date are its section's title ("## 0.129.0
(2026-02-12)" above "➖ Drop support for Python 3.9"), and a section's "It's a Flask plug-in, …" is named by its
heading ("### Flask-apispec"). The answer quotes the heading with the line (quote_selection)."""

from __future__ import annotations

import re

from kb_agent.agent import answer_types
from kb_agent.agent.evidence_units import Unit

TITLED_OWN = 0.75  # of the question a line must say itself to be answered by its section's heading
# a section's first line that speaks of its heading's thing without naming it ("It's a Flask plug-in, …")
_OPENS_WITH_IT = re.compile(r"^(?:it|it's|it is|this is|它|这是)\b", re.I)
_TITLE_WORDS = 4  # a heading this short is a name ("Flask-apispec"), a longer one a topic


def holds_version(unit: Unit, version: str, question: str) -> bool:
    """The line writes the release the question names (as that product's, "Starlette 1.0.0" is not FastAPI's),
    or a heading it sits under does ("## 0.100.0 (2023-07-07)")."""
    return answer_types.holds_version(unit.text, version, question) or answer_types.holds_version(unit.heading, version)


def titled(unit: Unit, types: list[int], question: str) -> Unit | None:
    """The nearest heading of the line's passage that, read with the line, states what the question asks: a
    release note's version and date are its section's title. Only a version, its end or a date: "Read One Hero"
    counts no heroes."""
    if not types or not set(types) <= answer_types.TITLED:
        return None
    return next(
        (h for h in reversed(unit.sections) if answer_types.states_each(types, f"{h.text} {unit.text}", question)),
        None,
    )


def kept_titled(found: list[Unit]) -> list[Unit]:
    """The ranked lines less those answered by their heading that say too little of the question: a release note
    read under its heading answers when it says nearly all of it ("Add docs for GraphQL" under "## 0.6.1" is no
    version that "added GraphQL subscriptions") and as much of it as any line stating a version itself ("Added in
    FastAPI 0.134.0")."""
    itself = max((u.own for u in found if u.titled is None), default=0.0)
    return [u for u in found if u.titled is None or (u.own >= TITLED_OWN and u.own >= itself)]


def titled_name(unit: Unit, units: list[Unit], lowered: str) -> Unit | None:
    """The heading that names what the line, the first of its section, says "It …" of: asked "Which Flask plug-in
    ties together …?", the answer is the section's title. None when the heading is a topic, says nothing the
    question does not, or another line of the section comes first."""
    if not unit.sections or not _OPENS_WITH_IT.match(unit.text):
        return None
    head = unit.sections[-1]
    if not head.names_thing or len(head.text.split()) > _TITLE_WORDS or head.text.lower() in lowered:
        return None  # "### Short" / "It has sensible defaults …": a topic, no thing's name
    before = units[unit.position - 1] if unit.position > 0 else None
    return head if before is None or before.line < head.line else None
