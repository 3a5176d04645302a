"""An evidence item as the claim check reads it: its lines normalised, their terms, and the list structure
that says what each line is about (the list items and heading that frame it)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from kb_agent.agent.claim_terms import CODE, HEADING_ANCHOR, content_terms, holds, holds_code, normalise
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence

TERM_FLOOR = 0.5  # share of a sentence's new content words its evidence item must contain
WINDOW_LINES = 5  # a citation points at no more lines than this

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
    # a record: all of it is one cited line
    numbers = [e.start_line] * len(raw) if e.is_record else list(range(e.start_line, e.end_line + 1))
    whole = normalise(HEADING_ANCHOR.sub("", " ".join([e.title, e.path, *raw])))
    framing = frames(raw)
    return EvidenceLines(
        numbers,
        [normalise(HEADING_ANCHOR.sub("", line)) for line in raw],  # "{ #pydantic-settings }" states nothing
        whole,
        content_terms(" ".join([e.title, e.text.replace("`", "")])),
        [content_terms(HEADING_ANCHOR.sub("", line).replace("`", "")) for line in raw],  # "`g`reater": greater
        has_cjk(e.text),
        content_terms(f"{e.title} {e.path.replace('/', ' ').replace('-', ' ')}"),
        framing,
        [bool(CODE.search(line)) for line in raw],
        [
            k if _BULLET.match(line) else next((f for f in framing[k] if _BULLET.match(raw[f])), None)
            for k, line in enumerate(raw)
        ],
    )


def windows(
    lines: EvidenceLines,
    items: set[str],
    terms: set[str],
    echo: AbstractSet[str] = frozenset(),
    shown: AbstractSet[str] = frozenset(),
    subjects: AbstractSet[str] = frozenset(),
    about: list[bool] | None = None,  # per line: about the subjects (ClaimChecker._about); None: every line
    anchored: AbstractSet[str] = frozenset(),  # names that must be on the window's lines or the lines framing them
):
    """(start line, end line, items held, new terms covered, question words echoed, starts with a statement -
    not a heading) for every window of 1..WINDOW_LINES lines. A window holds a value (or anything the sentence
    wrote as code) only on its lines about the sentence's subjects; a name if the name is in its item."""
    count = len(lines.texts)
    names = {i for i in items if i not in shown and i not in anchored and holds(lines.whole, i)}
    bound = about or [True] * count
    for start in range(count):
        for size in range(1, min(WINDOW_LINES, count - start) + 1):
            if size > 1 and crosses_items(lines, start, start + size - 1):
                break  # two sibling list items are two statements: a sentence joining them cites both
            text = " ".join(lines.texts[start : start + size])
            text_bound = " ".join(lines.texts[k] for k in range(start, start + size) if bound[k])
            # the sentence's subject may be named by the list item or heading that frames the lines
            framed = " ".join(lines.texts[f] for k in range(start, start + size) for f in lines.frames[k])
            inside = {
                i
                for i in items
                if (holds_code if i in shown else holds)(
                    f"{text} {framed}" if i in subjects or i in anchored else text_bound, i
                )
            }
            covered = len(terms & set().union(*lines.line_terms[start : start + size])) if terms else 0
            if not inside and not covered:
                continue  # a window must state something of the sentence itself
            yield (
                lines.numbers[start],
                lines.numbers[start + size - 1],
                inside | names,
                covered + len(inside),
                len(echo & set().union(*lines.line_terms[start : start + size])) if echo else 0,
                not lines.texts[start].lstrip().startswith("#"),
            )
