"""Relative clauses in a multi-step question: which noun phrase a clause describes ("the film | in which Tom
Sizemore had a supporting role"), a clause inside another one, and whether what is left around a bridge still asks
something. Read by `step_rules`, which turns them into steps."""

from __future__ import annotations

import re

from kb_agent.agent.shape import asks_reason_or_way

# "the book series on which …": a preposition before the pronoun belongs to the clause, not the noun phrase
_RELATIVE = re.compile(
    r"\b(?P<np>(?:the|a|an)\s+(?:[\w-]+(?:'s)?\s+){0,2}?[\w-]+)\s+"
    r"(?P<rel>that|(?:(?:on|in|at|for|from|by|with|to|of|about|under|through|into|after)\s+)?(?:which|whom|whose)"
    r"|who|where|when)\s+"
    r"(?P<clause>[^?]+?)\s*(?=\?|$)",
    re.I,
)
_TIME_NOUNS = frozenset("year years day days date time times period era season month decade century week night".split())
# what an outer question says besides the bridge: "Where was #1 born?" asks something, "What is #1?" does not
_FRAME_WORDS = frozenset(
    "what which who whom whose when where why how is are was were did does do has have had the a an in on at of "
    "year".split()
)


def relative_clauses(text: str) -> list[re.Match]:
    """The relative clauses that describe a hidden entity; none in a question asking why or how to do something
    (`asks_reason_or_way`): its clause describes the thing it asks about, which the page names."""
    if asks_reason_or_way(text):
        return []
    return [
        m
        for m in _RELATIVE.finditer(text)
        if m.group("rel").lower() != "when" or m.group("np").split()[-1].lower() in _TIME_NOUNS
    ]


# the end of a clause that sits inside another one: "the show where D. B. voices Paddy | is based"
_OUTER_TAIL = re.compile(r"\s+(?P<tail>(?:is|was|are|were)\s+[a-z][\w-]*(?:\s+(?:on|in|at|by|for|from|with))?)$")


def inner_relative(clause: str) -> tuple[re.Match, str, str] | None:
    """A relative clause inside a relative clause whose end is the outer clause's verb ("… is based"): the
    inner match, its clause without that end, and the end."""
    inner = next(iter(relative_clauses(clause)), None)
    if inner is None:
        return None
    tail = _OUTER_TAIL.search(inner.group("clause"))
    core = inner.group("clause")[: tail.start()].strip(" ,") if tail else ""
    if tail is None or len(core.split()) < 2:
        return None
    return inner, core, tail.group("tail")


def asks_more(outer: str) -> bool:
    """ "Where was #1 born?" asks something of the bridge; "What is #1?" does not."""
    return bool(set(re.findall(r"[a-z]+", outer.lower())) - _FRAME_WORDS)


def right_branching(step: str) -> tuple[str, str] | None:
    """A relative clause whose last noun phrase has a clause of its own, running to the end ("the producer who
    compiled the soundtrack of | the 1994 film in which Tom Sizemore had a supporting role"): that film first,
    then the producer of #1. None when the step holds no such clause."""
    outer = next(iter(relative_clauses(step)), None)
    if outer is None or outer.start() > 0:
        return None
    clause = outer.group("clause")
    inner = next(iter(relative_clauses(clause)), None)
    if inner is None or inner.start() == 0 or len(inner.group("clause").split()) < 2:
        return None
    before = f"{outer.group('np')} {outer.group('rel')} {clause[: inner.start()]}#1"
    if not asks_more(before.replace(outer.group("np"), "")):
        return None
    return f"{inner.group('np')} {inner.group('rel')} {inner.group('clause')}", " ".join(before.split())
