"""What a line of the evidence introduces and is quoted with: the short list, the terminal commands, the code
block or the short example that follows a line ending in ":" ("Defaults to:" / "Run it with:")."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import HEADING_ANCHOR
from kb_agent.agent.evidence_units import BULLET, RUN_ON_LINES, Unit
from kb_agent.tools.base import Evidence

LIST_ITEMS, LIST_ITEM_CHARS = 6, 160  # a list an answer line introduces, quoted with it: short items only
NAME_ITEMS, NAME_ITEM_CHARS = 9, 40  # a longer list is quoted when its items are names ("* NoSQL 数据库")
LIST_SPAN = 10  # lines from the line introducing a list to its last item: a quote of both is cited to all
# (an item's own items are not counted: "* Traefik" / "    * Automatically handles certificate renewals ✨" is one
# item, and a quote of such a list spans at most twice as many lines)
QUOTE_SPAN = 2 * LIST_SPAN
# an item's own items (one level, a few) are read as its continuation: "* **Validate data**: coming from each
# request:" / "    * Generating **automatic errors** …" is one item of what the line introduces
SUB_ITEMS = 2
_SUB = "\n  - "  # quoted as a list within the list


def _lines_of_introducer(unit: Unit, evidence: Evidence) -> list[str] | None:
    """The passage's lines when the unit is a whole line ending in ":" (what introduces a list or a command);
    None for a sentence inside a line, or a record."""
    if evidence.is_record or not unit.text.rstrip().endswith((":", "：")):
        return None
    lines = evidence.text.split("\n")
    own = lines[unit.line] if 0 <= unit.line < len(lines) else ""
    return lines if own.rstrip().endswith((":", "：")) else None


_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def list_after(unit: Unit, evidence: Evidence) -> list[str]:
    """The items of the flat list a line ending in ":" introduces ("`apiKey`: … can come from:" / "A query
    parameter." / "A header." / "A cookie."), as written; [] when no such list of short items follows it
    within LIST_SPAN lines (a nested one, a long one: the line is quoted alone, as before). The line alone
    names what it lists, not what the list says."""
    lines, start = _lines_of_introducer(unit, evidence), unit.line + 1
    if lines is None:
        lines, start = _examples_below(unit, evidence)
        if lines is None:
            return []
    own = lines[unit.line]
    floor = len(own) - len(own.lstrip()) if BULLET.match(own.strip()) else -1  # its own items sit deeper
    items: list[str] = []
    level = sub = None
    nested = 0  # the lines of items' own items so far
    for at in range(start, len(lines)):
        line, raw = lines[at], lines[at].strip()
        if not raw or _IMAGE.fullmatch(raw):  # "* in VS Code:" / its screenshot / "* in PyCharm:": one list
            continue
        indent = len(line) - len(line.lstrip())
        if not BULLET.match(raw) or indent <= floor or (level is not None and indent < level):
            break
        level = indent if level is None else level
        text = BULLET.sub("", HEADING_ANCHOR.sub("", raw))
        if len(text) > LIST_ITEM_CHARS and (label := _BOLD_LABEL.match(text)):
            text = label.group(1)  # "**Computer vision**: an image is composed of …": the item's name
        if len(text) > LIST_ITEM_CHARS or at - unit.line - nested >= LIST_SPAN or at - unit.line >= QUOTE_SPAN:
            return []
        if indent > level:  # "* **Validate data**: coming from each request:" / "    * Generating automatic errors …"
            if not items or (sub is not None and indent != sub) or items[-1].count(_SUB) >= SUB_ITEMS:
                return []  # a list of lists, deeper or longer: the line is quoted alone
            sub, nested = indent, nested + 1
            items[-1] = f"{items[-1]}{_SUB}{text}"
            continue
        if len(items) == NAME_ITEMS:
            return []
        items.append(text)
    # a longer list must be one of names; one item may say more ("* Handled internally by a cloud provider as part
    # of their services" among Docker, Kubernetes, Systemd …)
    if len(items) > LIST_ITEMS and sum(len(item) > NAME_ITEM_CHARS for item in items) > 1:
        return []
    return items


# "Common examples … are things that require complex math processing." / "For example:" / the list
_FOR_EXAMPLE = re.compile(r"(?:for example|for instance|e\.g\.|such as|例如|比如|举例来说|举个例子)\s*[:：]", re.I)
_BOLD_LABEL = re.compile(r"^\*\*([^*]{1,60})\*\*\s*[:：]")


def _examples_below(unit: Unit, evidence: Evidence) -> tuple[list[str] | None, int]:
    """The passage's lines and where a list begins, when the line the unit ends is followed by a bare "For
    example:" that opens the list: the examples are the unit's."""
    if evidence.is_record:
        return None, 0
    lines = evidence.text.split("\n")
    own = lines[unit.line].strip() if 0 <= unit.line < len(lines) else ""
    if not own or not own.endswith(unit.text.rstrip()[-12:]) or BULLET.match(own):
        return None, 0
    at = unit.line + 1
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at < len(lines) and _FOR_EXAMPLE.fullmatch(lines[at].strip()):
        return lines, at + 1
    return None, 0


# a line of markup that shows nothing a reader reads: a code fence, a terminal block's <div>
MARKUP_LINE = re.compile(r"^\s*(?:`{3,}[\w+-]*|~{3,}[\w+-]*|</?div\b[^>]*>)\s*$")
_COMMAND = re.compile(r"^\$ \S")
COMMANDS = 3  # the commands of one terminal block a line introduces


def commands_after(unit: Unit, evidence: Evidence) -> list[str]:
    """The commands of the terminal block a line ending in ":" introduces ("To generate a secure random secret
    key use the command:" / "$ openssl rand -hex 32"), without their output; [] when the next thing the line
    leads to is not a command within LIST_SPAN lines. The line alone says there is a command, not which."""
    lines = _lines_of_introducer(unit, evidence)
    if lines is None:
        return []
    commands: list[str] = []
    for at in range(unit.line + 1, min(len(lines), unit.line + LIST_SPAN)):
        raw = lines[at].strip()
        if _COMMAND.match(raw) and len(raw) <= LIST_ITEM_CHARS:
            commands.append(raw)
            if len(commands) == COMMANDS:
                break
        elif commands or (raw and not MARKUP_LINE.match(raw)):
            break  # the output after a command, or prose before one
    return commands


CODE_SPAN = 25  # lines of a code block a line introduces that are read with it


def code_after(unit: Unit, evidence: Evidence) -> str:
    """The code block right after a line ending in ":" ("You can import them from `fastapi.security`:" /
    ```python / from fastapi.security import (APIKeyHeader, …)), its first CODE_SPAN lines; "" when the line
    leads to anything else."""
    return "\n".join(_block_after(unit, evidence)[1])


def _block_after(unit: Unit, evidence: Evidence) -> tuple[str, list[str]]:
    """The fence opening the code block right after a line ending in ":", and the block's first CODE_SPAN
    lines; ("", []) when the line leads to anything else."""
    lines = _lines_of_introducer(unit, evidence)
    if lines is None:
        return "", []
    fence, block, _ = _fenced_block(lines, unit.line, CODE_SPAN)
    return fence, block


def _fenced_block(lines: list[str], row: int, span: int) -> tuple[str, list[str], bool]:
    """The fence opening the code block at the first text row after `row`, the block's first `span` lines, and
    whether its closing fence came within them; ("", [], False) when that row opens no block."""
    at = _next_text_row(lines, row)
    if not lines[at].strip().startswith(("```", "~~~")):
        return "", [], False
    block: list[str] = []
    for line in lines[at + 1 : at + 1 + span]:
        if line.strip().startswith(("```", "~~~")):
            return lines[at], block, True
        block.append(line)
    return lines[at], block, False


# a line that stops mid-sentence: it ends in a word ("… to the local API at", "…地址为"), not in punctuation
_UNFINISHED = re.compile(r"[^\W_]$")


def block_ending(unit: Unit, evidence: Evidence) -> list[str]:
    """The lines of the short code block a sentence runs on into ("… sends requests to the local API at" / ``` /
    http://localhost:8000/v1/agents/multivac): the sentence's end, without which it names nothing. [] when the
    line ends its sentence, or leads to anything but a block of at most RUN_ON_LINES short lines."""
    lines = evidence.text.split("\n")
    own = lines[unit.line].rstrip() if not evidence.is_record and 0 <= unit.line < len(lines) else ""
    if not own or not _UNFINISHED.search(own) or not own.endswith(unit.text.rstrip()):
        return []
    _, block, closed = _fenced_block(lines, unit.line, RUN_ON_LINES + 1)
    ending = [line.strip() for line in block]
    if not closed or not all(ending) or any(len(line) > LIST_ITEM_CHARS for line in ending):
        return []  # no closing fence within reach (a longer block), a blank or a long line: an example
    return ending


_HIGHLIGHTED = re.compile(r'hl_lines="([\d\s,-]+)"')


def example_lines(unit: Unit, evidence: Evidence) -> list[str]:
    """The lines of the code block a line ending in ":" introduces, stripped - only those its fence highlights
    (```JSON hl_lines="4-8"), when it does: what the example is shown for. [] when it leads to anything else."""
    fence, block = _block_after(unit, evidence)
    if not block:
        return []
    marked = _HIGHLIGHTED.search(fence)
    rows: list[int] = list(range(len(block)))
    if marked:
        wanted = set()
        for part in re.split(r"[\s,]+", marked.group(1).strip()):
            first, _, last = part.partition("-")
            wanted |= set(range(int(first) - 1, int(last or first)))
        rows = sorted(wanted & set(rows)) or rows
    return [block[i].strip() for i in rows if block[i].strip()]


def introduces_example(unit: Unit, evidence: Evidence) -> bool:
    """The line ends in ":" and leads to an example (a code block, an included source file) that is neither a
    short list nor commands: "You can then pass that custom function … parameter:" / {code}. What the example
    shows is the answer; the line only announces it."""
    lines = _lines_of_introducer(unit, evidence)
    if lines is None or list_after(unit, evidence) or commands_after(unit, evidence):
        return False
    return lines[_next_text_row(lines, unit.line)].strip().startswith(("```", "~~~", "{*", "{!"))


def _next_text_row(lines: list[str], row: int) -> int:
    """The first non-blank row after `row`; the last row when none is (a blank one, which starts nothing)."""
    return next((i for i in range(row + 1, len(lines)) if lines[i].strip()), len(lines) - 1)


# a plural pronoun opening a line names the items of the list before it: "They work the same way as for other …"
# after "In WebSocket endpoints you can import from `fastapi` and use:" / `Depends` / `Query` …
_THEY = re.compile(r"^(?:they|these|those|all of them|它们|这些|以上)", re.I)


def listed_before(unit: Unit, units: list[Unit], evidence: Evidence) -> tuple[Unit, list[str]] | None:
    """The line introducing the list right before `unit` and the list's items, when `unit` opens by naming them
    with a plural pronoun; None otherwise."""
    if unit.position <= 0 or not _THEY.match(unit.text):
        return None
    before = units[unit.position - 1]
    if before.heading != unit.heading or before.note:
        return None
    items = list_after(before, evidence)
    return (before, items) if items else None
