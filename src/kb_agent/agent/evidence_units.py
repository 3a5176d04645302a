"""The evidence as the extractive answer reads it: units, the lines of a passage that can answer (a Markdown
list item, a table row, a paragraph line), split into sentences when long, a short trailing clause
("Defaults to `600`.") kept with the sentence it completes, each with the headings it sits under. Include
markers, admonition fences, link menus, console frames and headings are not answers."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb_agent.agent.annotations import code_annotations
from kb_agent.agent.claim_terms import HEADING_ANCHOR, LINK_TARGET
from kb_agent.agent.evidence_sections import heading_text, under_heading
from kb_agent.agent.sentences import split_sentences
from kb_agent.text.tokenize import EN_STOPWORDS, ZH_STOPWORDS, has_cjk, mostly_chinese, tokenize
from kb_agent.tools.base import Evidence

# "{* file *}" and "{!file!}" includes and "{% for … %}" template tags are the page's build, not its text
_NOISE = re.compile(r"^\{\*.*\*\}$|^\{!.*!\}$|^\{%.*%\}$|^/{3}|^:::|^</?\w+[^>]*>$|^\|?[\s:|-]+\|?$|^[-=*_]{3,}$")
# a terminal transcript's frame and log lines ("│  API docs: http://…", "INFO:     Started server process [22]")
# state nothing; a command line ("$ pip install …") may be the answer and stays
_CONSOLE = re.compile(r"^[│┃║╭╮╰╯─━═┌┐└┘├┤╞╡]|^(?:INFO|DEBUG|WARNING|ERROR|CRITICAL):\s")
_TAG = re.compile(r"<[^>]+>")  # "<span style=…>INFO</span>:     Uvicorn running on …" is a log line too
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
_BLOCK_TAG, _MARKUP_WORDS = re.compile(r"^<(?:div|p|a|img|span|small|center|figure|section|table|tr|td)\b", re.I), 8
BULLET = re.compile(r"^(?:[*+-]|\d{1,3}[.)])\s+")
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
RUN_ON_LINES = 2  # a block longer than this is an example, not the end of the sentence before it
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
    # the rest of a sentence its list breaks ("When using any of:" / `Path()` … / "you can also declare …")
    tail: str = ""


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
    found = {
        _IRREGULAR.get(t, t) for t in tokenize(text) if t not in EN_STOPWORDS and t not in ZH_STOPWORDS and len(t) > 1
    }
    # an instance named after its class says the class's name: `security_scopes` is a `SecurityScopes`
    found |= {part.replace("_", "") for t in found if "_" in t for part in t.split(".") if "_" in part}
    # a `list` of `str`: of strings (the type on its own, not a part of `scope_str`)
    return found | {TYPE_WORDS[m.group(1).lower()] for m in _TYPE_WORD.finditer(text)}


# Python's built-in types say the word they abbreviate
_TYPE_WORD = re.compile(r"(?<![\w.])(str|int|bool|dict)(?!\w|\.\w)", re.I)
_TYPES = "str:string int:integer bool:boolean dict:dictionary"
TYPE_WORDS = {short: tokenize(word)[0] for short, word in (pair.split(":") for pair in _TYPES.split())}


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
    listed = False  # whether a list item has followed it
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
                headings = under_heading(headings, raw)
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
        cleaned = BULLET.sub("", HEADING_ANCHOR.sub("", raw).strip(" >"))
        label = ""
        item = not fenced and bool(BULLET.match(raw))
        continues = None
        if item:
            listed = lead is not None
            label, items = _nested(line, cleaned, items)
            cleaned = f"{label}: {cleaned}" if label else cleaned
        elif not fenced:
            continues = _continued(lead if listed else None, cleaned)
            lead = None
        if continues is not None and introduced is continues:
            introduced = None  # its items made no lines of their own: this line is the tail of its sentence only
            continue
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
        # "* API keys in:" over "    * Headers." / "    * Query parameters.": short, but it says what its items are
        opens_items = item and cleaned.endswith((":", "：")) and _items_below(lines, at)
        # "在页面中，您可以设置：" over "* "Item ID"…" / "* "Token"…": short, but it introduces what its list names
        opens_list = not item and not fenced and cleaned.endswith((":", "：")) and _items_below(lines, at, deeper=False)
        merged: list[str] = []
        for piece in pieces:  # "…responses. Defaults to `600`." stays one answer
            if merged and len(piece) < _SHORT_TAIL:
                merged[-1] += " " + piece
            else:
                merged.append(piece)
        for piece in merged:
            if (
                len(piece) >= _MIN_CHARS
                or (not fenced and _ANNOUNCES_RESULT_ZH.match(piece))
                or opens_items
                or opens_list
            ):
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
                        intro=lead if item else continues,
                        aside=aside,
                        sections=tuple(heading for _, heading in sections),
                    )
                )
        if units and not fenced and units[-1].text.endswith(":"):
            introduced, between = units[-1], []
        if units and not fenced and not item and units[-1].line == at and units[-1].text.endswith((":", "：")):
            lead, listed = units[-1], False
    return units


def _items_below(lines: list[str], at: int, deeper: bool = True) -> bool:
    """Whether the next line that says something is a list item indented deeper than line `at` (or, not
    `deeper`, at least as deep: a list a plain line introduces)."""
    indent = len(lines[at]) - len(lines[at].lstrip())
    for line in lines[at + 1 :]:
        if line.strip():
            below = len(line) - len(line.lstrip())
            return bool(BULLET.match(line.strip())) and (below > indent if deeper else below >= indent)
    return False


def _continued(lead: Unit | None, cleaned: str) -> Unit | None:
    """The line introducing the list just read, when this line goes on with its sentence ("When using any of:" /
    `Path()` / … / "you can also declare a group of `examples` …"): it takes the line as its tail."""
    if lead is None or not (cleaned[:1].islower() or _CONTINUES.match(cleaned)):
        return None
    lead.tail = cleaned[:_MAX_UNIT_CHARS]
    lead.terms = lead.terms | terms(cleaned)
    return lead


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


def _in_chinese(piece: str, fenced: bool, page_zh: bool) -> bool:
    """Code and bare names are in no language: in a Chinese page they are judged as Chinese, not on the
    question's identifiers alone ("contents = myfile.file.read()" answered "哪些成员可以读取文件名", the link
    "[Ariadne](https://ariadnegraphql.org/)" "推荐哪个 GraphQL 库"). An English sentence stays English."""
    if has_cjk(piece):
        return True
    return page_zh and (fenced or len(_ENGLISH_WORD.findall(LINK_TARGET.sub("]", piece))) < _ENGLISH_SENTENCE)


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
