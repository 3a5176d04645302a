"""The claim check: every sentence of an answer must be stated by the lines it cites.

A sentence's *checkable content* - numbers, identifiers and code names, quoted strings, named entities -
that the question did not already contain must appear (normalised for case, width and punctuation) within
a few consecutive lines of one evidence item; that smallest window is the citation. Its other content
words must mostly appear in the same evidence item (the lexical-entailment floor). A sentence that fails
against the sources it cites is re-cited to any evidence that holds its content; if none does, it is
removed. Cross-lingual sentences (a Chinese answer over English lines) are held to their checkable items.

A value counts only on a line about what the sentence is about (not under a sibling list item that names
other code), one window never joins two sibling list items, and a sentence stitched from several windows
keeps each value in its own clause's words. What is compared: `claim_terms.py`; how an evidence item's lines
and list structure are read, and its windows: `evidence_lines.py`; a stated default: `claim_defaults.py`; the
guards a chosen window passes (premise, code case, a version's owner, a unit): `claim_guards.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from kb_agent.agent.claim_defaults import contradicts_a_default
from kb_agent.agent.claim_guards import PREMISE_LINES, ClaimGuards
from kb_agent.agent.claim_terms import (
    CODE,
    COMMON_CAPS,
    DENIES,
    IDENT,
    NEGATES,
    TELLS_AN_END,
    checkable,
    code_items,
    content_terms,
    holds,
    is_value,
    normalise,
    shown,
)
from kb_agent.agent.evidence_following import MARKUP_LINE, QUOTE_SPAN
from kb_agent.agent.evidence_lines import (
    TERM_FLOOR,
    WINDOW_LINES,
    index_lines,
    windows,
)
from kb_agent.agent.evidence_units import EXAMPLE_GAP
from kb_agent.agent.sentences import Sentence
from kb_agent.store.spans import cite
from kb_agent.text.tokenize import cjk_chars, has_cjk
from kb_agent.tools.base import Evidence

_END = ".!?。！？:：;；"
_HALF_CHARS = 12  # each half of a quote around a left-out example
ITEM_MARK = re.compile(r"\n(?:  )?- ")  # the items (and sub-items) of a list an extractive answer quotes with its line
_ACRONYM = re.compile(r"[A-Z]{2,5}s?")  # HTML, JSON: common nouns here, not what a sentence is about


@dataclass
class Claim:
    sentence: str
    supported: bool
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (source index, start line, end line)
    citations: list[str] = field(default_factory=list)  # path:Lx-Ly of each span
    off_question: bool = False  # stated by the sources, but not about what the question asks (citations.py)

    def public(self) -> dict:
        return {
            "sentence": self.sentence,
            "supported": self.supported,
            "citation": "; ".join(self.citations) if self.citations else None,
            "off_question": self.off_question,
        }


FRAME_REACH = 3  # lines above a span its framing list item may be, to be cited with it
MAX_SPANS = 3  # one sentence may combine facts from at most this many narrow windows
# a sentence with no number, name or code to check is held by its words alone: its cited lines must hold two
# thirds of the words it adds to the question ("… by using the names of the parameters in the order they are
# declared" had passed on "declared", one of two, somewhere in the cited lines)
WORDS_ONLY_FLOOR = 2 / 3
PREMISE_RETRIES = 3  # sources set aside, in turn, when the best window's surroundings fail the premise
CONTEXT_WORDS = 4  # the sentence's words this close to a value (same clause) must also be near it in the evidence
_CLAUSE = re.compile(r"[,;:，；：、。]|\b(?:and|or|but|while)\b|和|以及|而")
_LEAD = re.compile(r"[\s*_\"'(\[]*([A-Z][a-z]+[A-Za-z0-9]*)\b(?![.\w-]*`)")


_BRIDGE = "\x00bridge"  # the bridge of a multi-step question as a name a passage may hold
_PROSE_NAME = re.compile(r"^[A-Z][A-Za-z&.' -]*$")  # "IBM", "Boston Beer Company"; not `600`, not max_age


def _written(sentence: str, item: str) -> str:
    """The item as the sentence writes it (its case), or "" when it is not written as such."""
    found = re.search(rf"(?<![\w`]){re.escape(item)}(?![\w`])", sentence, re.I)
    return found.group() if found else ""


def _words_beside(said: str, value: str) -> set[str]:
    """The content terms a normalised sentence puts within CONTEXT_WORDS of `value`, in its clause; none when
    the sentence does not write it."""
    at = said.find(value)
    if at < 0:
        return set()
    before = _CLAUSE.split(said[:at])[-1].split()[-CONTEXT_WORDS:]
    after = _CLAUSE.split(said[at + len(value) :])[0].split()[:CONTEXT_WORDS]
    return content_terms(" ".join(before + after))


def _stems(words: set[str]) -> set[str]:
    """Words by their first four letters: "lobby" beside "lobbyist", which the stemmer leaves apart."""
    return {w[:4] for w in words}


class ClaimChecker(ClaimGuards):
    def __init__(self, sources: list[Evidence], question: str, names_bridge: Callable[[str], bool] | None = None):
        self.sources = sources
        # a multi-step question's bridge, found by its steps: does a text name it?
        self.names_bridge = names_bridge
        self.question_items = checkable(question) | {normalise(w) for w in re.findall(r"[\w.-]{3,}", question)}
        self.question_terms = content_terms(question)
        # what the question asks about by name: its code names, and the Latin words of a Chinese question
        latin = set(re.findall(r"[A-Za-z_][\w.]{2,}", question)) if has_cjk(question) else set()
        self.question_names = checkable(question) | {normalise(w) for w in latin}
        self._lines = [index_lines(e) for e in sources]
        self._raw = [e.text.split("\n") for e in sources]
        self._quotable: dict[int, list[str]] = {}  # _quote_texts, per source

    def check(self, sentence: Sentence, verbatim: bool = False) -> Claim:
        """Supported, with the narrow spans that state it - `verbatim`: only a span that holds it word for word
        (a line of code)."""
        cited = [n - 1 for n in sentence.cited if 1 <= n <= len(self.sources)]
        order = list(dict.fromkeys(cited + list(range(len(self.sources)))))
        if verbatim:
            quoted = self._quoted(sentence.text, order)
            return self._claim(sentence.text, quoted) if quoted else Claim(sentence.text, False)
        as_code = shown(sentence.text)
        lead = self._lead_name(sentence.text) - self.question_items  # the answer's own subject: never background
        named = {i for i in checkable(sentence.text) if not self._background(i, as_code)} | lead
        items = {i for i in named if i not in self.question_items}
        terms = content_terms(sentence.text) - self.question_terms
        spans = self._quoted(sentence.text, order)
        if not spans:  # a sentence in its own words: what it repeats from the question must be there too
            # a value it repeats ("ge=1", "404") on the cited lines as well: a reader opening them sees the fact
            restated_values = (named - items) & as_code
            spans = self._cover(items | restated_values, terms, sentence.text, order, lead)
            for _ in range(PREMISE_RETRIES):  # the value is also in a warning elsewhere: try the next sources
                if not spans or self._premise_held(sentence.text, named - items, spans):
                    break
                order = self._retry_order(sentence.text, order, {index for index, _, _ in spans})
                spans = self._cover(items | restated_values, terms, sentence.text, order, lead)
            else:
                spans = []
            # the names it writes in prose (not values or code); all its other words the question's, and what it
            # adds such a name
            prose = {i for i in named - as_code if _PROSE_NAME.search(_written(sentence.text, i))}
            filled = prose & items
            restates = filled and not terms - content_terms(" ".join(items))
            if spans and restates and not self._fills_the_slot(sentence.text, filled, spans):
                spans = []  # "… left office to lobby for IBM" cited to "… IBM executive, Scott Howell"
            if spans and not self._joined_by_passages(prose):
                spans = []  # "The head coach at the university where Hoffner was coordinator is Chuck Priore"
        if spans and contradicts_a_default(sentence.text, [self._lines[index] for index, _, _ in spans]):
            spans = []
        if spans and self._changes_a_unit(sentence.text, spans):
            spans = []
        if spans and not self._listed_items_held(sentence.text, spans):
            spans = []  # "… combines the first tag, the path operation name, and …": the first tag is elsewhere
        if spans and TELLS_AN_END.search(sentence.text) and not self._near_line(spans, TELLS_AN_END):
            spans = []  # "… removed support … is 0.115.0" cited to "supported since 0.115.0"
        if spans and NEGATES.search(sentence.text) and not self._near_line(spans, DENIES):
            spans = []  # "FastAPI 的作者没有研究过 OpenAPI 规范" cited to lines that deny nothing
        if spans and not self._code_case_held(sentence.text, spans):
            spans = []
        if spans and not self._feature_near(sentence.text, spans):
            spans = []  # "FastAPI 从 0.115.0 版本开始支持这个特性" cited to a note on another feature
        if spans and not self._version_owner_held(sentence.text, spans):
            spans = []  # "The minimum version of uv … is 0.112.0" cited to the lines pinning FastAPI's version
        if not spans:
            return Claim(sentence.text, False)
        subjects = self._subjects(sentence.text)
        framed = [framed for span in spans for framed in self._with_frame(subjects, span)]
        return self._claim(sentence.text, self._telling(terms, self._showing(as_code, framed)))

    def _retry_order(self, sentence: str, order: list[int], used: set[int]) -> list[int]:
        """The sources a premise retry reads: the rest, but no translation once a page in the sentence's own
        language failed - there the question's words cannot be compared, so the premise would pass unread."""
        zh = has_cjk(sentence)
        own_failed = any(self._lines[i].zh == zh for i in used)
        return [i for i in order if i not in used and not (own_failed and self._lines[i].zh != zh)]

    def _showing(self, values: AbstractSet[str], spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Spans widened, within WINDOW_LINES, to a nearby line of their item that shows a value or code the
        sentence writes and no cited line shows: "the `directory` parameter …, and the `name` parameter …" was
        cited to the `name` line alone, two lines below `directory="static"`. A reader opening the citation sees
        both."""
        cited = " ".join(
            self._lines[i].texts[k] for i, start, end in spans for k in self._lines[i].positions(start, end)
        )
        missing = {v for v in values if not holds(cited, v)}
        if not missing:
            return spans
        widened = []
        for index, start, end in spans:
            lines = self._lines[index]
            for k in self._near(index, start, end):
                found = {v for v in missing if holds(lines.texts[k], v)}
                number = lines.numbers[k]
                if found and max(end, number) - min(start, number) < WINDOW_LINES:
                    start, end = min(start, number), max(end, number)
                    missing -= found
            widened.append((index, start, end))
        return widened

    def _telling(self, terms: set[str], spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Spans joined by a sibling list item near them that says what the sentence adds and no cited line says:
        "… means that the value must start with … "fixedquery"" was cited to "`$`: ends there, … after
        `fixedquery`" alone, while "`^`: starts with …" two items up tells the start (a window never spans two
        sibling items, so the sentence joining them cites each)."""
        missing = terms - set().union(*(self._window_terms(span) for span in spans))
        extra: list[tuple[int, int, int]] = []
        for index, start, end in spans:
            lines = self._lines[index]
            for k in self._near(index, start, end):
                found = missing & lines.line_terms[k]
                if found and lines.item_of[k] is not None and not start <= lines.numbers[k] <= end:
                    extra.append((index, lines.numbers[k], lines.numbers[k]))
                    missing -= found
        return spans + extra[: max(0, MAX_SPANS - len(spans))]

    def _claim(self, sentence: str, spans: list[tuple[int, int, int]]) -> Claim:
        citations = [
            cite(self.sources[index].path, start, end, self.sources[index].page) for index, start, end in spans
        ]
        return Claim(sentence, True, spans, citations)

    def _cover(
        self, items: set[str], terms: set[str], sentence: str, order: list[int], lead: AbstractSet[str] = frozenset()
    ) -> list[tuple[int, int, int]]:
        """Narrow windows (cited sources first) that together hold every item - a value (number, quoted string,
        code span, boolean) inside the window, on a line about what the sentence is about; a name (identifier,
        entity) anywhere in the same evidence item - and the lexical floor on top."""
        zh = has_cjk(sentence)
        echo = content_terms(sentence) & self.question_terms
        on_lines = shown(sentence)
        subjects = self._subjects(sentence)
        usable = [i for i in order if not (zh != self._lines[i].zh and not items)]
        if not items and not terms:
            return []  # nothing a source could be shown to state
        about = {index: self._about(index, subjects) for index in usable} if items else {}
        chosen: list[tuple[int, int, int]] = []
        shown_by: list[set[str]] = []  # the values each chosen window holds
        remaining = set(items)
        while remaining and len(chosen) < MAX_SPANS:
            best = None
            for rank, index in enumerate(usable):
                found = windows(
                    self._lines[index], remaining, terms, echo, on_lines, subjects, about[index], lead & items
                )
                for start, end, held, covered, echoed, statement in found:
                    # all it can hold; where the sentence writes it as code, lines that write it as code (the
                    # parameter `embed`, not "embed the body"); in the fewest lines, a statement rather than the
                    # heading above it; on a tie, the lines that also say what the sentence repeats from the
                    # question ("add … project"); then the page in the sentence's language (an English sentence
                    # cited to the Chinese translation of the line it restates sends the reader to the wrong page)
                    as_code = self._as_code(index, start, end, held & on_lines) if held & on_lines else 0
                    same = self._lines[index].zh == zh
                    key = (len(held), as_code, -(end - start), covered, echoed, statement, same, -rank)
                    if held and (best is None or key > best[0]):
                        best = (key, (index, start, end), held)
            if best is None:
                return []
            chosen.append(best[1])
            shown_by.append(best[2] & on_lines & remaining)
            remaining -= best[2]
        if remaining:
            return []
        if len(chosen) > 1 and not all(map(self._in_context, [sentence] * len(chosen), shown_by, chosen)):
            return []  # a sentence stitched from several windows: each value in its own words
        if not chosen:  # no checkable item: the window that states most of the sentence's new words
            for index in usable:
                if self._lines[index].zh != zh:
                    continue  # cross-lingual sentences must carry a checkable item
                spans_found = [
                    (start, end, covered, echoed)
                    for start, end, _, covered, echoed, _ in windows(self._lines[index], set(), terms, echo)
                    if covered
                ]
                if spans_found:  # most new words, then most of the question's words repeated, fewest lines, first
                    start, end, _, _ = max(spans_found, key=lambda w: (w[2], w[3], w[0] - w[1], -w[0]))
                    chosen = [(index, start, end)]
                    break
            if not chosen:
                return []
        involved = {index for index, _, _ in chosen}
        same_language = [i for i in involved if self._lines[i].zh == zh]
        if terms and same_language:
            if items:
                known, floor = set().union(*(self._lines[i].terms for i in same_language)), TERM_FLOOR
            else:  # nothing checkable to show: the cited lines themselves must say most of what the sentence adds
                known = set().union(*(self._window_terms(span) for span in chosen if span[0] in same_language))
                floor = WORDS_ONLY_FLOOR
            if len(terms & known) / len(terms) < floor:
                return []
        return chosen

    def _as_code(self, index: int, start: int, end: int, values: AbstractSet[str]) -> int:
        """How many of `values` the window writes as code: in backticks, or as a code line uses a name
        (`embed=`, `embed(`, `embed:`)."""
        lines, raw = self._lines[index], self._raw[index]
        text = "\n".join(raw[k] for k in lines.positions(start, end) if k < len(raw))
        spans, said = " ".join(normalise(m) for m in CODE.findall(text)), normalise(text)
        return sum(1 for v in values if v in spans or re.search(rf"(?<![\w.]){re.escape(v)}\s*[=(:]", said))

    def _near(self, index: int, start: int, end: int) -> range:
        """Positions of the lines start..end of source `index` and WINDOW_LINES either side."""
        lines = self._lines[index]
        here = lines.positions(start, end)
        return range(max(0, here[0] - WINDOW_LINES), min(len(lines.texts), here[-1] + WINDOW_LINES + 1))

    def _near_line(self, spans: list[tuple[int, int, int]], says: re.Pattern) -> bool:
        """A cited line (or one WINDOW_LINES around it) says `says`: tells of an end (removed, dropped, no
        longer), or denies something."""
        return any(
            says.search(self._lines[index].texts[k])
            for index, start, end in spans
            for k in self._near(index, start, end)
        )

    def _with_frame(self, subjects: set[str], span: tuple[int, int, int]) -> list[tuple[int, int, int]]:
        """A span whose subject (self._subjects) only the list item (or heading) framing it names starts at that
        line, when it is near: a reader opening "L37-38" sees that the `float` of line 38 is
        `datetime.timedelta`'s. A heading further up is cited beside it: "L23-23; L50-50" shows the section
        "Using `Jinja2Templates`" that line 50's `fastapi.templating` is about."""
        index, start, end = span
        lines = self._lines[index]
        cited = lines.positions(start, end)
        if not subjects or all(holds(" ".join(lines.texts[k] for k in cited), s) for s in subjects):
            return [span]
        for f in lines.frames[cited[0]]:
            if any(holds(lines.texts[f], s) for s in subjects):
                if start - lines.numbers[f] <= FRAME_REACH:
                    return [(index, lines.numbers[f], end)]
                return [(index, lines.numbers[f], lines.numbers[f]), span]
        return [span]

    def _in_context(self, sentence: str, values: set[str], span: tuple[int, int, int]) -> bool:
        """The words a sentence puts right around a value must be around it in the evidence too: "send a keep
        alive `Cache-Control: no-cache` comment" has the value of one list item in the words of the item above.
        Only the sentence's plain words count (not its other values, not the question's, not generic ones); none
        around it, no test. Asked of sentences stitched from several windows only: a single window's paraphrase
        is held to the lexical floor, and this test removed true ones there (the "in context" recheck, stop 24)."""
        said = normalise(sentence)
        index, start, end = span
        lines = self._lines[index]
        cited = lines.positions(start, end)
        near = set().union(
            *(lines.line_terms[k] for k in cited), *(lines.line_terms[f] for f in lines.frames[cited[0]])
        )
        items = checkable(sentence)
        for value in values:
            words = _words_beside(said, value) - content_terms(" ".join(items)) - self.question_terms
            if words and not words & near:
                return False
        return True

    def _fills_the_slot(self, sentence: str, items: set[str], spans: list[tuple[int, int, int]]) -> bool:
        """A sentence that restates the question and puts a name in the asked slot ("… left office to lobby for
        IBM") states only that name: the question's words beside it must be beside it in the evidence too, on the
        lines of some span holding it (not only somewhere in the question). No such words, no test."""
        said = normalise(sentence)
        for item in items:
            words = _words_beside(said, item) - content_terms(" ".join(items))
            if not words:
                continue
            named = content_terms(item)
            near: set[str] = set()
            for index, start, end in spans:  # the lines that hold the name, not the other spans' lines
                lines = self._lines[index]
                held = [lines.line_terms[k] for k in lines.positions(start, end)]
                if any(named <= terms for terms in held):
                    near |= set().union(*held)
            if near and not _stems(words) & _stems(near):
                return False
        return True

    def _joined_by_passages(self, names: set[str]) -> bool:
        """A multi-step question's answer in the model's words ties its names together through passages that
        each hold two of them, the bridge the steps found counting as a name: "The head football coach at
        Wisconsin-Eau Claire, where Todd Hoffner was coordinator, is Chuck Priore" joins a coach's record to
        Hoffner's, and no passage holds Priore with any other name of it. Names no passage holds are left to the
        other checks; without a bridge (one lookup) there is no chain to follow."""
        if self.names_bridge is None:
            return True
        texts = [normalise(e.text) for e in self.sources]
        held = [{n for n in names if holds(text, n)} for text in texts]
        groups = [
            h | ({_BRIDGE} if self.names_bridge(e.text) else set()) for h, e in zip(held, self.sources, strict=True)
        ]
        reached = {n for n in names if any(n in h for h in held)}
        if len(reached) < 2:
            return True
        joined = {next(iter(reached))}
        grew = True
        while grew:
            grew = False
            for group in groups:
                if group & joined and not group <= joined:
                    joined |= group
                    grew = True
        return reached <= joined

    def _lead_name(self, sentence: str) -> set[str]:
        """The name a sentence opens with, when it states something of it: "Uvicorn is compatible with HTTP/2"
        is about Uvicorn, and a list item that says it of Hypercorn does not state it, though the item above
        names Uvicorn. A name: capitalised, not a common opening word, and written capitalised inside a
        sentence of the sources (so "Install …" is no name). It must be on the cited lines or frame them."""
        match = _LEAD.match(sentence)
        if match is None or match.group(1) in COMMON_CAPS:
            return set()
        inside = re.compile(rf"[a-z,] \**{re.escape(match.group(1))}\b")
        return {normalise(match.group(1))} if any(inside.search(e.text) for e in self.sources) else set()

    def _subjects(self, sentence: str) -> set[str]:
        """The code names a sentence is about that the question asked about: `datetime.timedelta` for "timedelta
        在请求和响应中用什么类型表示" (a Latin word of a Chinese question counts)."""
        named = code_items(sentence) | {normalise(m) for m in IDENT.findall(sentence) if not _ACRONYM.fullmatch(m)}
        asked = {q for q in self.question_names if re.search(r"[a-z]", q) and not _ACRONYM.fullmatch(q.upper())}
        return {n for n in named if any(holds(n, q) for q in asked)}

    def _about(self, index: int, subjects: AbstractSet[str]) -> list[bool]:
        """Per line: may it state something about the subjects? When the nearest line framing it that names code
        (its list item, its heading) names something else, no: under "* `datetime.time`:" the value
        `14:23:55.003` is datetime.time's, not `datetime.timedelta`'s. Otherwise the line or one of the
        PREMISE_LINES above it names a subject ("* `str`" in a list of common types is about no subject)."""
        lines = self._lines[index]
        if not subjects:
            return [True] * len(lines.texts)

        def names_subject(k: int) -> bool:
            return any(holds(lines.texts[k], s) for s in subjects)

        named = [names_subject(k) for k in range(len(lines.texts))]
        if len(named) > 1 and lines.numbers[0] == lines.numbers[-1]:
            return [any(named)] * len(named)  # a record is one cited line: its fields are all about its key
        out = []
        for k in range(len(lines.texts)):
            framing = next((f for f in lines.frames[k] if named[f] or lines.has_code[f]), None)
            if framing is not None:
                out.append(named[k] or named[framing])
            else:  # prose: the subject is named on the line or just above it
                out.append(any(named[max(0, k - PREMISE_LINES) : k + 1]))
        return out

    def _background(self, item: str, as_code: AbstractSet[str] = frozenset()) -> bool:
        """A plain name at least half of several sources mention ("FastAPI" in the FastAPI docs) frames a
        sentence ("在 FastAPI 中，…"); it is no claim of its own. Values are always checked, and so is a name the
        sentence writes as code that the question did not ask about: "install `httpx`" states what to install."""
        if is_value(item) or len(self._lines) < 3 or (item in as_code and item not in self.question_items):
            return False
        return 2 * sum(1 for lines in self._lines if item in lines.whole) >= len(self._lines)

    def _quoted(self, sentence: str, order: list[int]) -> list[tuple[int, int, int]]:
        """A sentence the sources state word for word is cited to the lines it was taken from."""
        wanted = normalise(ITEM_MARK.sub(" ", sentence)).rstrip(_END).strip()  # a quoted list: its lines
        # a Chinese character says about what two Latin letters do: "你不应该固定`starlette`的版本" is a sentence
        if len(wanted) + cjk_chars(wanted) < 20:
            return []
        # a sentence quoted around the example that breaks it: its halves in order, the example between
        halves = [half.strip() for half in wanted.split(f" {normalise(EXAMPLE_GAP)} ")]
        if len(halves) > 1 and min(map(len, halves)) < _HALF_CHARS:
            return []  # "It … 5" is no quote: each half must say something of its own
        if ITEM_MARK.search(sentence):  # a list's items in order, each as written: a long item by its name alone
            halves = [
                part
                for piece in ITEM_MARK.split(sentence)
                for half in normalise(piece).split(f" {normalise(EXAMPLE_GAP)} ")
                if (part := half.rstrip(_END).strip())
            ]
        halves = [re.escape(half) for half in halves]
        # to its last character: "… like: 2008-09-15" is not the line that goes on "…-15t15:53:00"
        whole = re.compile(".*?".join(halves) + r"(?![A-Za-z0-9_])", re.S)
        spread = ITEM_MARK.search(sentence) or len(halves) > 1
        # a list (and the line going on below it) or an example quoted with its line
        longest = QUOTE_SPAN + 2 if spread else WINDOW_LINES
        for size in range(1, longest + 1):  # the fewest lines first
            for index in order:
                lines, texts = self._lines[index], self._quote_texts(index)
                for start in range(len(lines.texts) - size + 1):
                    if whole.search(" ".join(t for t in texts[start : start + size] if t)):
                        return [(index, lines.numbers[start], lines.numbers[start + size - 1])]
        return []

    def _quote_texts(self, index: int) -> list[str]:
        """A source's lines as a word-for-word quote reads them, made once per source: without their indent (a
        list item's), a fence or a terminal's <div> between a line and the command it introduces as nothing.
        Every sentence's quote check joins them into windows of up to QUOTE_SPAN lines."""
        if index not in self._quotable:
            self._quotable[index] = [
                "" if MARKUP_LINE.match(raw) else t.strip()
                for t, raw in zip(self._lines[index].texts, self._raw[index], strict=True)
            ]
        return self._quotable[index]
