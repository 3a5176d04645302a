"""The evidence as the extractive answer reads it: units, the lines of a passage that can answer (a Markdown
list item, a table row, a paragraph line), split into sentences when long, a short trailing clause
("Defaults to `600`.") kept with the sentence it completes, each with the headings it sits under. Include
markers, admonition fences, link menus, console frames and headings are not answers."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb_agent.agent.annotations import code_annotations
from kb_agent.agent.claim_terms import HEADING_ANCHOR, LINK_TARGET
from kb_agent.agent.sentences import split_sentences
from kb_agent.text.tokenize import EN_STOPWORDS, ZH_STOPWORDS, has_cjk, mostly_chinese, tokenize
from kb_agent.tools.base import Evidence

_NOISE = re.compile(r"^\{\*.*\*\}$|^/{3}|^:::|^</?\w+[^>]*>$|^\|?[\s:|-]+\|?$|^[-=*_]{3,}$")
# a terminal transcript's frame and log lines ("│  API docs: http://…", "INFO:     Started server process [22]")
# state nothing; a command line ("$ pip install …") may be the answer and stays
_CONSOLE = re.compile(r"^[│┃║╭╮╰╯─━═┌┐└┘├┤╞╡]|^(?:INFO|DEBUG|WARNING|ERROR|CRITICAL):\s")
_TAG = re.compile(r"<[^>]+>")  # "<span style=…>INFO</span>:     Uvicorn running on …" is a log line too
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
_BLOCK_TAG, _MARKUP_WORDS = re.compile(r"^<(?:div|p|a|img|span|small|center|figure|section|table|tr|td)\b", re.I), 8
_ANCHOR_WORDS = re.compile(r"\{\s*#([A-Za-z0-9_-]+)\s*\}")  # an English anchor (a translation keeps it)
_BULLET = re.compile(r"^(?:[*+-]|\d{1,3}[.)])\s+")
_MIN_CHARS, _MAX_UNIT_CHARS, _SHORT_TAIL = 15, 400, 45
# a short Chinese line announcing the response an example shows ("响应结果是：") says as much as a longer English
# one ("The response would be like:"); other short lead-ins ("支持以下参数：") stay unread, as before
_ANNOUNCES_RESULT_ZH = re.compile(r"^[^：]{0,12}(?:响应|输出|结果|返回)[^：]{0,12}：$")
_SHORT_LEAD = 80  # a line introducing a list this short titles it ("Some of the tools you could use as … are:")
_SHORT_PARENT = 30  # a list item this short (a name: no clause of its own) is a label its sub-items describe
_CLAUSE_END = re.compile(r"[.。!?！？:：;；]")
_ENGLISH_WORD, _ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z]{2,}\b"), 4
_RELEASE = re.compile(r"v?\d+\.\d+(?:\.\d+)*\b")  # a release's heading: "0.104.0 (2023-10-18)"
_LINKED = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_IDENTIFIER_TITLE = re.compile(r"[A-Za-z]\w*(?:[-.]\w+)+|[A-Za-z][a-z\d]*[A-Z]\w*")  # Flask-apispec, FastAPI
# after "...with:" and an example, the sentence goes on: "and those …", or a clause in lower case ("If we had
# imported one after the other, like:" / … / "the `router` from `users` would overwrite the one from `items`")
_CONTINUES = re.compile(r"^(?:and|or|but|so|that|which|then|this|it)\b|^(?:the|a|an|we|you|they)\s(?:\S+\s+){2}")
EXAMPLE_GAP = "…"  # where a quoted sentence skips the example that breaks it


@dataclass
class Unit:
    text: str
    source: int  # 0-based
    position: int
    terms: set[str]
    coverage: float = 0.0
    own: float = 0.0  # the share of the question's key terms (by weight) the line or its headings hold
    score: float = 0.0
    heading: str = ""  # the headings the line sits under: what it is about when it does not say
    zh: bool = False  # its language; an example's code lines take their page's
    note: str = ""  # a code line's annotation, what it names it as ("Start from the official Python base image")
    line: int = 0  # its line in the passage (0-based)
    label: str = ""  # the short list item it is a sub-item of ("Traefik"): what it describes
    pointed_to: bool = False  # chosen as the line another chosen one points back to ("For that, …")
    intro: Unit | None = None  # a list item's: the line introducing its list ("**Swagger UI** uses the files:")
    aside: bool = False  # inside an admonition ("/// tip" … "///"): beside the text, not part of its flow
    # the passage's own heading lines above it, outermost first ("0.129.0 (2026-02-12)" > "Breaking Changes"):
    # a release note's version and date are in its heading, not on its line
    sections: tuple[Unit, ...] = ()
    titled: Unit | None = None  # the heading that states what was asked for it (set by the ranker)
    names_thing: bool = False  # a heading that is a name (a link, code, an identifier), not a topic ("Short")
    # the words of the short example a sentence broken by it leaves out ("If you run it with:" `$ python
    # myapp.py` "then … `__name__` … will have as value …"): what the sentence speaks of, said by the example
    shown_terms: frozenset[str] = frozenset()


# irregular verb forms read as their verb: "Who builds FastAPI Cloud?" / "… is built by the same author …" (the
# stemmer leaves "built" as it is). Only here, where a question meets a line - not in the keyword index. Not the
# forms that are frame words ("made", "given") or read otherwise ("known as", "sent" beside "sending").
_IRREGULAR = {
    form: tokenize(verb)[0]
    for verb, forms in {
        "build": "built",
        "write": "written wrote",
        "sell": "sold",
        "hold": "held",
        "win": "won",
        "begin": "began begun",
        "choose": "chose chosen",
        "take": "taken took",
        "keep": "kept",
        "bring": "brought",
        "buy": "bought",
        "teach": "taught",
        "spend": "spent",
        "lose": "lost",
        "draw": "drawn drew",
        "grow": "grown grew",
        "throw": "thrown threw",
        "break": "broke broken",
        "speak": "spoke spoken",
        "hide": "hidden hid",
    }.items()
    for form in forms.split()
}


def terms(text: str) -> set[str]:
    return {
        _IRREGULAR.get(t, t) for t in tokenize(text) if t not in EN_STOPWORDS and t not in ZH_STOPWORDS and len(t) > 1
    }


def units_of(source: int, evidence: Evidence) -> list[Unit]:
    lines = evidence.text.split("\n")
    if evidence.is_record:  # one statement
        text = " — ".join(line.strip() for line in lines if line.strip())[:_MAX_UNIT_CHARS]
        return [Unit(text, source, 0, terms(text), zh=has_cjk(text))]
    units: list[Unit] = []
    headings = [heading_text(h) for h in evidence.heading_path]
    page_zh = mostly_chinese(evidence.text)
    notes = code_annotations(lines)
    fenced = False
    introduced: Unit | None = None  # a unit ending in ":" whose example may be followed by its sentence's end
    between: list[str] = []  # the lines of that example
    items: list[tuple[int, str]] = []  # the list items above this line: (indent, text)
    lead: Unit | None = None  # the line ending in ":" that the list being read follows
    aside = False
    diagram = False  # a ```mermaid block draws a diagram: its lines ("Proxy->>Server: …<br/>…") state nothing
    sections: list[tuple[int, Unit]] = []  # the passage's heading lines above this line: (level, heading)
    for at, line in enumerate(lines):
        raw = line.strip()
        if raw.startswith(("```", "~~~")):
            fenced, lead = not fenced, None
            diagram = fenced and raw.lstrip("`~").strip().lower() == "mermaid"
            continue
        if diagram:
            continue
        if fenced and introduced is not None and raw:
            between.append(_TAG.sub("", raw))
        if raw.startswith("///") and not fenced:  # "/// tip" opens an admonition, a bare "///" closes it
            aside = raw != "///"
            continue
        if raw.startswith("#"):  # a heading (or a comment in an example): no answer
            if not fenced:
                introduced = lead = None
                headings = _under(headings, raw)
                sections = _section_under(sections, raw, source, at)
            continue
        if (
            not raw
            or _NOISE.match(raw)
            or _menu(raw)
            or (not fenced and _markup(raw))
            or _CONSOLE.match(_TAG.sub("", raw))
        ):
            continue
        cleaned = _BULLET.sub("", HEADING_ANCHOR.sub("", raw).strip(" >"))
        label = ""
        item = not fenced and bool(_BULLET.match(raw))
        if item:
            label, items = _nested(line, cleaned, items)
            cleaned = f"{label}: {cleaned}" if label else cleaned
        elif not fenced:
            lead = None
        if introduced is not None and not fenced and _CONTINUES.match(cleaned):
            # "You can set the parameter `x=True`:" {example} "and those default values won't be included":
            # one sentence, broken by its example
            # the quote marks the example it leaves out: the sentence's two halves are lines apart
            introduced.text = f"{introduced.text} {EXAMPLE_GAP} {cleaned}"[:_MAX_UNIT_CHARS]
            introduced.terms = terms(introduced.text)
            # a short example it leaves out is still what the sentence speaks of: "If you run it with:"
            # `$ python myapp.py` "then … `__name__` … will have as value …" is about myapp.py
            if len(between) <= RUN_ON_LINES + 1:
                introduced.shown_terms = frozenset(terms(" ".join(between)) - introduced.terms)
            introduced = None
            continue
        if not fenced:  # the example's own lines stay answers of their own
            introduced = None
        pieces = [cleaned] if fenced or len(cleaned) <= 200 else [s.text for s in split_sentences(cleaned)]
        merged: list[str] = []
        for piece in pieces:  # "…responses. Defaults to `600`." stays one answer
            if merged and len(piece) < _SHORT_TAIL:
                merged[-1] += " " + piece
            else:
                merged.append(piece)
        for piece in merged:
            if len(piece) >= _MIN_CHARS or (not fenced and _ANNOUNCES_RESULT_ZH.match(piece)):
                zh = _in_chinese(piece, fenced, page_zh)
                # `FROM python:3.14`: "the base image"; a list item is read under a short line introducing its
                # list as under a heading ("**Swagger UI** uses the files:"); a long one is prose, not a title
                titled = [lead.text] if item and lead is not None and len(lead.text) <= _SHORT_LEAD else []
                about = " ".join([*headings, *titled, notes.get(at, "")]).strip()
                units.append(
                    Unit(
                        piece[:_MAX_UNIT_CHARS],
                        source,
                        len(units),
                        terms(piece),
                        heading=about,
                        zh=zh,
                        note=notes.get(at, ""),
                        line=at,
                        label=label,
                        intro=lead if item else None,
                        aside=aside,
                        sections=tuple(heading for _, heading in sections),
                    )
                )
        if units and not fenced and units[-1].text.endswith(":"):
            introduced, between = units[-1], []
        if units and not fenced and not item and units[-1].line == at and units[-1].text.endswith((":", "：")):
            lead = units[-1]
    return units


def _nested(line: str, cleaned: str, items: list[tuple[int, str]]) -> tuple[str, list[tuple[int, str]]]:
    """The short list item this one is a sub-item of ("" if none), and the items above the next line. A list
    item under a short one says what it says of that one: "* Traefik" / "    * Automatically handles
    certificate renewals" is "Traefik: Automatically handles certificate renewals"."""
    indent = len(line) - len(line.lstrip())
    items = [(at, text) for at, text in items if at < indent]
    parent = items[-1][1] if items else ""
    items.append((indent, cleaned))
    if parent and len(parent) <= _SHORT_PARENT and len(parent.split()) <= 4 and not _CLAUSE_END.search(parent):
        return parent, items
    return "", items


LIST_ITEMS, LIST_ITEM_CHARS = 6, 160  # a list an answer line introduces, quoted with it: short items only
LIST_SPAN = 10  # lines from the line introducing a list to its last item: a quote of both is cited to all


def _lines_of_introducer(unit: Unit, evidence: Evidence) -> list[str] | None:
    """The passage's lines when the unit is a whole line ending in ":" (what introduces a list or a command);
    None for a sentence inside a line, or a record."""
    if evidence.is_record or not unit.text.rstrip().endswith((":", "：")):
        return None
    lines = evidence.text.split("\n")
    own = lines[unit.line] if 0 <= unit.line < len(lines) else ""
    return lines if own.rstrip().endswith((":", "：")) else None


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
    floor = len(own) - len(own.lstrip()) if _BULLET.match(own.strip()) else -1  # its own items sit deeper
    items: list[str] = []
    level = None
    for at in range(start, len(lines)):
        line, raw = lines[at], lines[at].strip()
        if not raw:
            continue
        indent = len(line) - len(line.lstrip())
        if not _BULLET.match(raw) or indent <= floor or (level is not None and indent < level):
            break
        level = indent if level is None else level
        text = _BULLET.sub("", HEADING_ANCHOR.sub("", raw))
        if len(text) > LIST_ITEM_CHARS and (label := _BOLD_LABEL.match(text)):
            text = label.group(1)  # "**Computer vision**: an image is composed of …": the item's name
        if indent > level or len(text) > LIST_ITEM_CHARS or len(items) == LIST_ITEMS or at - unit.line >= LIST_SPAN:
            return []
        items.append(text)
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
    if not own or not own.endswith(unit.text.rstrip()[-12:]) or _BULLET.match(own):
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
RUN_ON_LINES = 2  # a block longer than this is an example, not the end of the sentence before it


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


def _in_chinese(piece: str, fenced: bool, page_zh: bool) -> bool:
    """Code and bare names are in no language: in a Chinese page they are judged as Chinese, not on the
    question's identifiers alone ("contents = myfile.file.read()" answered "哪些成员可以读取文件名", the link
    "[Ariadne](https://ariadnegraphql.org/)" "推荐哪个 GraphQL 库"). An English sentence stays English."""
    if has_cjk(piece):
        return True
    return page_zh and (fenced or len(_ENGLISH_WORD.findall(LINK_TARGET.sub("]", piece))) < _ENGLISH_SENTENCE)


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
        headings = _under(headings, lines[at].strip())
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


def _section_under(sections: list[tuple[int, Unit]], line: str, source: int, at: int) -> list[tuple[int, Unit]]:
    """The passage's heading lines above the next line, after heading line `at`. A heading is quoted as itself:
    its position (below every line's) sets it apart from the line below it."""
    level = len(line) - len(line.lstrip("#"))
    text = _LINKED.sub(r"\1", heading_text(line))  # "[Flask-apispec](https://…)" reads "Flask-apispec"
    named = bool(_LINKED.search(line) or "`" in line or _IDENTIFIER_TITLE.fullmatch(text))
    heading = Unit(text, source, -1 - at, terms(text), zh=has_cjk(text), line=at, names_thing=named)
    # a change log's "## 0.104.0 (2023-10-18)" / "## Features" / "## Upgrades": the release holds until the next one
    kept = [s for s in sections if s[0] < level or (_RELEASE.match(s[1].text) and not _RELEASE.match(text))]
    return [*kept, (level, heading)]


def _under(headings: list[str], line: str) -> list[str]:
    """The heading path after a heading line inside the passage (its level is its count of "#")."""
    text = heading_text(line)
    if headings and headings[-1] == text:  # the passage opens with the heading its path already ends in
        return headings
    level = len(line) - len(line.lstrip("#"))
    return [*headings[: max(0, level - 1)], text]


def is_prose(line: str) -> bool:
    """A line that says something: not blank, a heading, a fence, an admonition mark, a tag or a link menu."""
    raw = line.strip()
    return bool(raw) and not raw.startswith(("#", "```", "~~~")) and not _NOISE.match(raw) and not _menu(raw)


def _menu(line: str) -> bool:
    """Navigation and link lists: several links and few words of their own."""
    links = _LINK.findall(line)
    return len(links) >= 2 and len(_LINK.sub("", line).split()) < 6


def _markup(line: str) -> bool:
    """A block of page HTML that shows a few words (a testimonial's "Deon Pillsbury - Cisco (ref)", a badge):
    its URLs and styles are not its content. In an example (fenced) the markup is what is shown."""
    return bool(_BLOCK_TAG.match(line)) and len(_TAG.sub(" ", line).split()) < _MARKUP_WORDS
