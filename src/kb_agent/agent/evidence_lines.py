"""An evidence item as the claim check reads it: its lines normalised, their terms, and the list structure
that says what each line is about (the list items and heading that frame it)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb_agent.agent.claim_terms import CODE, content_terms, normalise
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence

TERM_FLOOR = 0.5  # share of a sentence's new content words its evidence item must contain

_BULLET = re.compile(r"^\s*(?:[*+-]|\d{1,3}[.)])\s")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


def frames(raw: list[str]) -> list[list[int]]:
    """For each line, the lines above it that say what it is about, nearest first: the list items it sits in
    and its section's heading. The line under "* `datetime.time`:" is about `datetime.time`, not the next item."""
    out: list[list[int]] = []
    open_items: list[tuple[int, int]] = []  # (indentation, line) of the list items still open
    heading: list[int] = []
    for i, line in enumerate(raw):
        indent = len(line) - len(line.lstrip())
        if _HEADING.match(line):
            out.append([])
            open_items, heading = [], [i]
            continue
        if _BULLET.match(line):
            while open_items and open_items[-1][0] >= indent:
                open_items.pop()
            out.append([j for _, j in reversed(open_items)] + heading)
            open_items.append((indent, i))
            continue
        if line.strip() and indent == 0:
            open_items = []  # a paragraph closes the list
        out.append([j for _, j in reversed(open_items)] + heading)
    return out


@dataclass
class EvidenceLines:
    numbers: list[int]
    texts: list[str]  # normalised
    whole: str  # normalised text of the item, its title and path
    terms: set[str] = field(default_factory=set)
    line_terms: list[set[str]] = field(default_factory=list)
    zh: bool = False
    page_terms: set[str] = field(default_factory=set)  # of the item's title and path
    frames: list[list[int]] = field(default_factory=list)  # positions of the lines framing each line
    has_code: list[bool] = field(default_factory=list)  # the line names something in `code`
    item_of: list[int | None] = field(default_factory=list)  # position of the list item a line belongs to

    def positions(self, start: int, end: int) -> range:
        """Positions of the lines numbered start..end (a record's lines all share one number)."""
        first = self.numbers.index(start)
        return range(first, len(self.numbers) - self.numbers[::-1].index(end))


def _related(lines: EvidenceLines, item: int, other: int) -> bool:
    """The same list item, or one inside the other."""
    return item == other or item in lines.frames[other] or other in lines.frames[item]


def crosses_items(lines: EvidenceLines, first: int, last: int) -> bool:
    """Does line `last` sit in a list item unrelated to (neither inside, around nor equal to) one of the items
    of lines first..last-1? Windows grow one line at a time, so only the new line needs comparing."""
    new = lines.item_of[last]
    if new is None:
        return False
    return any(
        item is not None and not _related(lines, item, new) for item in {lines.item_of[k] for k in range(first, last)}
    )


def sibling_says_more(lines: EvidenceLines, cited: set[int], words: set[str]) -> bool:
    """Each list item is its own statement: when an item beside the cited ones (not a parent or child) repeats
    more of the question's words than they do - and at least TERM_FLOOR of them - the question asks about that
    item, and the value the sentence took from a cited item answers something else."""
    mine = {item for item in (lines.item_of[k] for k in cited) if item is not None}
    if not mine:
        return False
    said: dict[int, set[str]] = {}
    for j, item in enumerate(lines.item_of):
        if item is not None:
            said.setdefault(item, set()).update(lines.line_terms[j] & words)
    own = set().union(*(said[m] for m in mine))
    best = max((len(w) for item, w in said.items() if not any(_related(lines, item, m) for m in mine)), default=0)
    return best > len(own) and best >= TERM_FLOOR * len(words)


def index_lines(e: Evidence) -> EvidenceLines:
    raw = e.text.split("\n")
    if len(raw) == e.end_line - e.start_line + 1:
        numbers = list(range(e.start_line, e.end_line + 1))
    else:  # a record: all of it is one cited line
        numbers = [e.start_line] * len(raw)
    whole = normalise(" ".join([e.title, e.path, *raw]))
    framing = frames(raw)
    return EvidenceLines(
        numbers,
        [normalise(line) for line in raw],
        whole,
        content_terms(" ".join([e.title, e.text.replace("`", "")])),
        [content_terms(line.replace("`", "")) for line in raw],  # "`g`reater than or `e`qual": greater
        has_cjk(e.text),
        content_terms(f"{e.title} {e.path.replace('/', ' ').replace('-', ' ')}"),
        framing,
        [bool(CODE.search(line)) for line in raw],
        [
            k if _BULLET.match(line) else next((f for f in framing[k] if _BULLET.match(raw[f])), None)
            for k, line in enumerate(raw)
        ],
    )
