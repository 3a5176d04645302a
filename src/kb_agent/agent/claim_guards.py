"""The guards a claim's window passes besides holding the sentence's values: what it repeats from the question is
near the cited lines, a name written as code is written so there, a version belongs to the name it is given, a
number keeps its unit. `ClaimChecker` (claims.py) runs them on the windows it chose."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import (
    CODE,
    OWNER_LINES,
    VERSION_NUMBER,
    checkable,
    content_terms,
    names_word,
    number_units,
    version_owner,
)
from kb_agent.agent.evidence_lines import TERM_FLOOR, EvidenceLines, sibling_says_more
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence

PREMISE_LINES = 5  # the question's words a sentence repeats must be this close to its cited lines
SECTION_LINES = 30  # a name the question gave may be introduced this far above or below, on the same page
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")  # an identifier written as code: `Body`, `fastapi.FastAPI`
_RELEASE_HEADING = re.compile(r"^#{1,3}\s+v?(\d+\.\d+(?:\.\d+)*)\b")  # "## 0.70.0 (2021-10-07)"


# the words of a which-version question that name no feature: "哪个版本给所有安全方案类都加上了 description 参数？"
_VERSION_FRAME = frozenset(
    content_terms(
        "version versions release released add added adds support supports supported all 版本 发布 加上 添加 新增 支持 所有 开始"
    )
)


_THIS_FEATURE = re.compile(
    r"(?:这个|该|此|这一|这项)(?:特性|功能|能力|支持|改动|变化)|\bthis (?:feature|functionality|support|change|capability)\b"
    r"|\b(?:it|this) (?:is|was|has been) (?:supported|available|added)\b",
    re.I,
)


# an English list of three or more: "the function name, the path, and the HTTP method"
_LISTED = re.compile(r"((?:[^,;:.!?]+,\s*){2,})(?:and|or)\s+([^,;:.!?]+)")


class ClaimGuards:
    """The checks on a chosen window; the checker holds the sources, their read lines and the question's terms."""

    sources: list[Evidence]
    question_terms: set[str]
    _lines: list[EvidenceLines]
    _raw: list[list[str]]

    def _premise_held(self, sentence: str, restated: set[str], spans: list[tuple[int, int, int]]) -> bool:
        """What a sentence repeats from the question must be in the evidence it cites: "the version that added
        Kafka support is 0.70.0" is not stated by a release header that never mentions Kafka, nor "`status_code`
        returns only the values explicitly set" by a line about `status_code` alone. Names: anywhere in the
        cited items; the question's words: at TERM_FLOOR within PREMISE_LINES of the cited lines (same language
        only), and not rather in a sibling list item - "`Cache-Control: no-cache` is set to prevent buffering" is
        not stated by the item that sets it "to prevent caching" when the next item says "to prevent buffering"."""
        acronyms = {a.lower() for a in re.findall(r"\b[A-Z]{2,5}\b", sentence)}  # HTML, JSON: common nouns here
        if not all(self._named_near(item, spans) for item in restated - acronyms):
            return False
        if not self._release_names(sentence, restated - acronyms, spans):
            return False
        words = content_terms(sentence) & self.question_terms
        zh = has_cjk(sentence)
        same_language = [span for span in spans if self._lines[span[0]].zh == zh]
        near = self._terms_near(same_language)
        if not words or not same_language:
            return True  # nothing restated, or only other-language evidence: words cannot be compared
        plain = words - content_terms(" ".join(checkable(sentence)))  # names frame the items, they state nothing
        for index in {index for index, _, _ in spans}:
            lines = self._lines[index]
            cited_here = {k for i, start, end in spans if i == index for k in lines.positions(start, end)}
            if lines.zh == zh and sibling_says_more(lines, cited_here, plain):
                return False
        return len(words & near) / len(words) >= TERM_FLOOR

    def _feature_near(self, sentence: str, spans: list[tuple[int, int, int]]) -> bool:
        """A release given to "this feature" ("FastAPI 从 0.115.0 版本开始支持这个特性") is the one asked for only
        where the cited lines speak of what the question names: a note on query parameter models does not speak
        of the security schemes' `description`. Judged on sentences that name none of it themselves."""
        subject = self.question_terms - _VERSION_FRAME
        if not (subject and VERSION_NUMBER.search(sentence) and _THIS_FEATURE.search(sentence)):
            return True
        if content_terms(sentence) & subject:
            return True
        return len(subject & self._terms_near(spans)) / len(subject) >= TERM_FLOOR

    def _terms_near(self, spans: list[tuple[int, int, int]]) -> set[str]:
        """The terms of the cited lines' pages and of the lines within PREMISE_LINES of them."""
        near: set[str] = set()
        for index, start, end in spans:
            lines = self._lines[index]
            cited = lines.positions(start, end)
            near = near.union(
                lines.page_terms, *lines.line_terms[max(0, cited[0] - PREMISE_LINES) : cited[-1] + 1 + PREMISE_LINES]
            )
        return near

    def _named_near(self, item: str, spans: list[tuple[int, int, int]]) -> bool:
        """A name the sentence repeats from the question is in a cited item, or on a line of evidence from the
        same page within SECTION_LINES of the cited lines: the section that introduces `CORSMiddleware` a dozen
        lines above its `max_age` line. A release header 900 lines from the Kafka note does not qualify."""
        for index, start, end in spans:
            if item in self._lines[index].whole:
                return True
            path = self.sources[index].path
            for other, lines in enumerate(self._lines):
                if (
                    other != index
                    and self.sources[other].path == path
                    and any(
                        item in text and max(start - n, n - end) <= SECTION_LINES
                        for n, text in zip(lines.numbers, lines.texts, strict=True)
                    )
                ):
                    return True
        return False

    def _release_names(self, sentence: str, restated: set[str], spans: list[tuple[int, int, int]]) -> bool:
        """A release the sentence gives a name it repeats from the question ("FastAPI 从 0.70.0 版本开始支持 Trio")
        is that name's release only when the release's own section says the name: "Finally to FastAPI `0.70.0`"
        sits 17 lines above the 0.69.0 section adding Trio, near enough for `_named_near`. Judged where the cited
        lines sit under a release heading ("## 0.70.0 (2021-10-07)") the sentence gives."""
        versions = set(VERSION_NUMBER.findall(sentence))
        if not versions or not restated:
            return True
        judged = False
        for index, start, _ in spans:
            page = self._page_lines(self.sources[index].path)
            headings = {n: m.group(1) for n, text in page.items() if (m := _RELEASE_HEADING.match(text))}
            above = [n for n in headings if n <= start]
            if not above or headings[above[-1]] not in versions:
                continue
            judged = True
            opened = above[-1]
            closed = next((n for n in headings if n > opened), None)  # the next release's heading, if held
            section = " ".join(text for n, text in page.items() if n >= opened and (closed is None or n < closed))
            if all(item.lower() in section.lower() for item in restated):
                return True
        return not judged

    def _page_lines(self, path: str) -> dict[int, str]:
        """The lines of a page the evidence holds, from all its passages, by line number."""
        page: dict[int, str] = {}
        for source, lines, raw in zip(self.sources, self._lines, self._raw, strict=True):
            if source.path == path and not source.is_record:
                page.update(zip(lines.numbers, raw, strict=False))
        return dict(sorted(page.items()))

    def _code_case_held(self, sentence: str, spans: list[tuple[int, int, int]]) -> bool:
        """A name the sentence writes as code with capitals (`Body`, `CORSMiddleware`) is a name in code: the
        cited lines (or the list item or heading framing them) must write it so. The word "body" in "Read the
        body of the request" does not state "use the `Body` parameter" - case-folded, it had."""
        names = {m.strip() for m in CODE.findall(sentence) if _NAME.match(m.strip()) and not m.strip().islower()}
        if not names:
            return True
        raw: list[str] = []
        for index, start, end in spans:  # a record's lines all share its one number: positions() gives them all
            lines, text = self._lines[index], self._raw[index]
            cited = lines.positions(start, end)
            raw += [text[k] for k in {*cited, *(f for k in cited for f in lines.frames[k])}]
        held = " ".join(raw)
        return all(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", held) for name in names)

    def _version_owner_held(self, sentence: str, spans: list[tuple[int, int, int]]) -> bool:
        """A version number the sentence gives a name ("the version of uv", "Python 3.10") is that name's: the
        cited lines, the lines within OWNER_LINES of them, their headings or their page's title must say the
        name. The lines pinning FastAPI's `0.112.0` state no version of uv."""
        name = version_owner(sentence)
        if name is None or not VERSION_NUMBER.search(sentence):
            return True
        for index, start, end in spans:
            e, lines = self.sources[index], self._lines[index]
            near = [k for k, n in enumerate(lines.numbers) if start - OWNER_LINES <= n <= end + OWNER_LINES]
            framing = {f for k in near for f in lines.frames[k]}
            if names_word(
                " ".join([e.title, *e.heading_path, *(self._raw[index][k] for k in {*near, *framing})]), name
            ):
                return True
        return False

    def _listed_items_held(self, sentence: str, spans: list[tuple[int, int, int]]) -> bool:
        """Each item of a list the sentence gives ("A, B, and C") says something the cited lines say: "FastAPI
        combines the first tag, the path operation name, and the HTTP method" cited to "… uses the function name,
        the path, and the HTTP method …" shares most of its words with the line, but the first tag is not there.
        An item of only the question's words (or none) is not judged."""
        listed = _LISTED.search(sentence)
        if listed is None:
            return True
        cited = set().union(*(self._window_terms(span) for span in spans))
        items = [*re.split(r",\s*", listed.group(1)), listed.group(2)]
        return all(not new or new & cited for new in (content_terms(item) - self.question_terms for item in items))

    def _window_terms(self, span: tuple[int, int, int]) -> set[str]:
        index, start, end = span
        lines = self._lines[index]
        return set().union(*(t for n, t in zip(lines.numbers, lines.line_terms, strict=False) if start <= n <= end))

    def _changes_a_unit(self, sentence: str, spans: list[tuple[int, int, int]]) -> bool:
        """A number the sentence reads in one unit that the cited lines state only in another: "keeps messages
        15 天" cited to "当 15 秒内没有任何消息时". A number the lines state without a unit is not judged."""
        said = number_units(sentence)
        if not said:
            return False
        cited = " ".join(
            self._lines[index].texts[k] for index, start, end in spans for k in self._lines[index].positions(start, end)
        )
        stated = number_units(cited)
        return any((n, u) not in stated and any(m == n for m, _ in stated) for n, u in said)
