"""Answers cut into sentences (zh and en) with the [n] source markers that follow each one.

Abbreviations (e.g., J.K.), decimals and versions do not end a sentence; a marker after the full stop still
belongs to its sentence; while an answer streams, a sentence is complete only once what follows it arrives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# [2], [1, 3], and what small models write for them: [<2>], [source 2], [<source id="2">], 【2】
_MARK = (
    r"[\[【]\s*<?\s*(?:source(?:\s+id)?\s*=?\s*[\"']?)?(\d{1,3}(?:\s*[,，]\s*\d{1,3})*)[\"']?\s*/?>?\s*"
    r"[\]】]"
)
_MARKERS = re.compile(r"\s*" + _MARK, re.I)
_ABBREVIATIONS = frozenset("e.g i.e etc vs mr mrs ms dr st no fig eq approx cf al inc ltd jr sr".split())


@dataclass
class Sentence:
    text: str  # without markers
    cited: list[int]  # 1-based source numbers the model gave
    lead: str = ""  # the spacing before it (a newline keeps list items on their lines)
    # a quoted line the next one points back to ("For that, …"): it is kept only with that one, which carries
    # what makes the pair on the question
    joins_next: bool = False


def sentence_ends(text: str) -> list[int]:
    """Offsets just past each complete sentence (and the [n] markers that follow it). A sentence that ends
    exactly at the end of `text` is not complete yet: a marker may still follow it."""
    ends, i = [], 0
    while i < len(text):
        ch = text[i]
        i += 1
        if not (ch in "。！？!?\n" or (ch == "." and _ends_sentence(text[:i], text[i:]))):
            continue
        if ch != "\n" and _inside_tag(text[:i]):
            continue  # <abbr title="Content Delivery Network: A service, … CSS. It's …">: the tag's own text
        markers = _MARKERS.match(text, i)
        if markers:
            i = markers.end()
        rest = text[i:].lstrip()
        if not rest or re.fullmatch(r"[\[【][^\]】\n]{0,12}", rest):
            break  # what follows (perhaps this sentence's marker) has not arrived yet
        ends.append(i)
    return ends


def without_markers(text: str) -> str:
    return _MARKERS.sub(" ", text)


def split_sentences(text: str) -> list[Sentence]:
    """Sentences (zh and en) with the [n] markers that follow them. Abbreviations (e.g., J.K.), decimals and
    versions do not end a sentence; a marker after the full stop still belongs to its sentence."""
    out: list[Sentence] = []
    start = 0
    for end in [*sentence_ends(text), len(text)]:
        _push(out, text[start:end])
        start = end
    return out


class SentenceStream:
    """Feed streamed pieces; get complete sentences as soon as what follows them has arrived."""

    def __init__(self):
        self._buffer = ""

    def feed(self, piece: str) -> list[Sentence]:
        self._buffer += piece
        ends = sentence_ends(self._buffer)
        if not ends:
            return []
        done, self._buffer = self._buffer[: ends[-1]], self._buffer[ends[-1] :]
        return split_sentences(done)

    def close(self) -> list[Sentence]:
        rest, self._buffer = self._buffer, ""
        return split_sentences(rest)


_TAG_OPEN = re.compile(r"<[A-Za-z][\w-]*\s[^<>]*$")  # an HTML tag opened and not yet closed, with attributes


def _inside_tag(buffer: str) -> bool:
    return _TAG_OPEN.search(buffer[-600:]) is not None


def _ends_sentence(buffer: str, rest: str) -> bool:
    if rest[:1] and not rest[:1].isspace() and not rest.startswith("["):
        return False  # 3.14, v1.2, example.com, e.g.x
    if re.search(r"(?:^|\n)[ \t]*\d{1,3}\.$", buffer):
        return False  # "1. Install …": the number of a list item, not a sentence
    word = re.search(r"([A-Za-z.]+)\.$", buffer)  # e.g. / J.K. / U.S. do not end a sentence
    return not (
        word
        and (
            word.group(1).lower().rstrip(".") in _ABBREVIATIONS
            or re.fullmatch(r"(?:[A-Za-z]\.)*[A-Za-z]", word.group(1))
        )
    )


def _push(out: list[Sentence], raw: str) -> None:
    cited = [int(n) for group in re.findall(_MARK, raw, re.I) for n in re.split(r"\s*[,，]\s*", group)]
    text = _MARKERS.sub("", raw)
    stripped = text.strip()
    if re.search(r"\w", stripped):  # a stray bracket or full stop is no sentence
        out.append(Sentence(stripped, cited, text[: len(text) - len(text.lstrip())]))


# inline HTML the docs write inside a sentence: shown as the page reads, not as its source
_TITLED = re.compile(r"<(abbr|dfn|acronym)\b[^>]*?\btitle=(\"[^\"]*\"|'[^']*')[^>]*>(.*?)</\1\s*>", re.I | re.S)
_CODE = re.compile(r"<code\b[^>]*>([^<`]*)</code\s*>", re.I)
_INLINE = re.compile(
    r"<(a|span|strong|em|b|i|u|font|small|mark|kbd|abbr|dfn|acronym)\b[^>]*>(.*?)</\1\s*>", re.I | re.S
)


def as_read(text: str) -> str:
    """A quoted sentence as its page reads: `<abbr title="Content Delivery Network">CDN</abbr>` is "CDN (Content
    Delivery Network)", `<span style=…>INFO</span>` is "INFO". The claim check has read the source's own text."""
    for _ in range(3):  # tags inside tags
        shown = _TITLED.sub(lambda m: f"{m.group(3)} ({m.group(2)[1:-1].strip()})", text)
        shown = _INLINE.sub(lambda m: m.group(2), shown)
        shown = _CODE.sub(lambda m: f"`{m.group(1)}`", shown)
        if shown == text:
            break
        text = shown
    return text
