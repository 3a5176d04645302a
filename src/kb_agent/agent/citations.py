"""Answers bound to their evidence: every sentence goes through the claim check (agent/claims.py) and is
kept only with citations to the few lines that state it, numbered by first use, with a References footer.
Also the refusal that says what was found instead, and the model-refusal phrases."""

from __future__ import annotations

import re
from collections.abc import Callable

from kb_agent.agent.claim_terms import CODE, checkable, holds, normalise
from kb_agent.agent.claims import Claim, ClaimChecker
from kb_agent.agent.evidence_sections import code_above, section_lines, section_of
from kb_agent.agent.name_kinds import asked_kind
from kb_agent.agent.reasons import refers_back
from kb_agent.agent.sentences import Sentence, as_read, split_sentences, without_markers
from kb_agent.store.spans import cite
from kb_agent.text.tokenize import has_cjk, tokenize
from kb_agent.tools.base import Evidence

_FOOTER = re.compile(
    r"\n+(?:\*\*)?(?:references|sources|参考(?:资料|文献)?|来源)(?:\*\*)?\s*[:：]?\s*\n.*\Z", re.I | re.S
)
REFUSAL_RE = re.compile(
    r"(?:cannot|can't|could not|couldn't|unable to) (?:find|answer|determine)|(?:do|does) not (?:contain|mention|provide)|"
    r"no (?:information|relevant)|not (?:mentioned|found|covered)|无法(?:回答|找到|确定)|没有(?:找到|相关|提到)|未(?:找到|提及)",
    re.I,
)
_END_PUNCT = ".!?。！？:：;；"
ANCHOR_REACH = 3  # lines either side of a citation where a pronoun's name may be
FOLLOW_REACH = 8  # lines below the sentence before it where one pointing back may go on (past a note's fence)
# what names something in a sentence: code, an identifier, a number, a capitalised word past the first, a Latin
# word in a Chinese sentence
_NAMED = re.compile(
    r"`([^`]+)`|\b(\w+[_.\-/]\w[\w.\-/]*)|\b(\d[\d.,]*)\b|(?<=[\w,;:)] )([A-Z][\w-]*)|(?<=[\u4e00-\u9fff])\s*([A-Za-z][\w-]+)"
)


# a piece of code cut off mid-structure ('"data": {', "X-Token:"): a model's answer of it states nothing
_FRAGMENT = re.compile(r"""\W*[\w.-]+\W*\s*[:{\[(,]\s*""")
# a sentence that opens by pointing at the one before it ("This …", "That version …", "It …", "这 …")
_POINTS_BACK = re.compile(r"\s*(?:this|that|these|those|such|it|they|which)\b|\s*(?:这|那|此|它|其)", re.I)


def _method_named(said: str, anchor: str) -> bool:
    """`app.frontend()` asked about, "missing frontend paths" said: a method on an object is named by its own
    name (four letters or more; `app.` is whichever object the example calls it on)."""
    name = anchor.rstrip("()").rsplit(".", 1)[-1] if "." in anchor else ""
    return len(name) >= 4 and name.isalpha() and re.search(rf"\b{re.escape(name)}\b", said) is not None


def _path_named(said: str, anchor: str) -> bool:
    """`backend/main.py` asked about: the module it is to Python (`backend.main`), or a tree listing the folder
    and the file on the lines around ("├── backend", "│   ├── main.py"), names it as much as the path does."""
    folders, _, file = anchor.rpartition("/")
    if not folders or "." not in file:
        return False
    module = f"{folders}/{file.rsplit('.', 1)[0]}".replace("/", ".")
    return holds(said, module) or all(holds(said, part) for part in [*folders.split("/"), file] if part)


class CheckedAnswer:
    """Builds an answer sentence by sentence. `add` returns the text to show for a sentence ("" when the
    sentence was removed), so the checked answer can be streamed as it is written."""

    def __init__(
        self,
        sources: list[Evidence],
        question: str,
        anchors: list[str] | None = None,
        subjects: set[str] | None = None,
        names: set[str] | None = None,
        names_bridge: Callable[[str], bool] | None = None,
    ):
        self.sources = sources
        self.checker = ClaimChecker(sources, question, names_bridge)
        # the code names the question is about (`max_age`): a sentence that neither says one nor cites a line
        # that does answers another question, however true it is
        self.anchors = [normalise(a) for a in anchors or []]
        # the question's rare words (analysed): what a model sentence with nothing checkable must be about
        self.subjects = set(subjects or ())
        # the rare names the question writes as prose (analysed): the passage a sentence cites must write them
        self.names = set(names or ())
        self._passage_terms: dict[int, set[str]] = {}
        self.unnamed: set[str] = set()  # the names a removed sentence's passages did not write
        self.question = question
        # the pieces of the names the question writes ("pytest" of "pytest-xdist"), read once per answer
        self._question_pieces = {p for item in self.checker.question_items for p in re.split(r"[-.]", item) if p}
        self._kind = asked_kind(question)  # the kind of name asked for, if any
        self._question_words = set(re.findall(r"[\w.]+", question.lower()))  # what a sentence's code may say of it
        self.claims: list[Claim] = []
        self.citations: list[dict] = []
        self._numbers: dict[tuple[int, int, int], int] = {}
        self._parts: list[str] = []
        self._fenced = False  # inside a code block the answer opened
        self._waiting: list[Sentence] = []  # antecedents held until the line pointing back to them is judged
        self._written_before: bool | None = None  # whether the model's previous sentence was kept
        self._prose_before: bool | None = None  # whether the model's last sentence outside a code block was kept

    @property
    def kept(self) -> int:
        return sum(1 for c in self.claims if c.supported)

    def add_text(self, text: str, written: bool = False) -> str:
        return "".join(self.add(s, written) for s in split_sentences(_FOOTER.sub("", text.strip())))

    def add(self, sentence: Sentence, written: bool = False) -> str:
        """The sentence with its citations if the sources state it, else "". A fence the answer writes is no
        claim, and a line of code inside one must be copied from a source word for word: "from fastapi import
        FastAPI, Body" had passed on the words "FastAPI" and "body". `written`: the model's own sentence, not a
        quote of the evidence."""
        if "```" in sentence.text:
            self._fenced ^= sentence.text.count("```") % 2 == 1
            return ""
        if not re.search(r"\w", sentence.text):
            return ""  # punctuation left between markers: no claim at all
        # a model's sentence announcing what follows ("响应结果是：", "The response is:") stands with what it
        # announces: kept only if the next one is, dropped when nothing follows
        if sentence.joins_next or (written and without_markers(sentence.text).rstrip().endswith((":", "："))):
            self._waiting.append(sentence)
            return ""
        waiting, self._waiting = self._waiting, []
        claim = self.checker.check(sentence, verbatim=self._fenced)
        if claim.supported and not (
            self._on_question(claim)
            and self._names_all(claim)
            and (not written or (self._on_subject(claim) and self._names_one(claim)))
        ):
            claim.supported, claim.off_question = False, True
        if written and claim.supported and _FRAGMENT.fullmatch(without_markers(sentence.text).strip()):
            claim.supported = False  # true of its line as a substring, but no statement of anything
        if written:
            # "This can be found in the release notes for that version, which states: …" after the removed
            # "The version that added Kafka support is 0.70.0": true of its lines, but it vouches for the claim
            if claim.supported and self._written_before is False and _POINTS_BACK.match(without_markers(sentence.text)):
                claim.supported, claim.off_question = False, True
            if self._fenced and claim.supported and self._prose_before is False:
                # the code the removed sentence introduced ("For example, you can modify the code as follows:"):
                # a line of a page quoted under an invented claim answers nothing (dev16 u1603 kept only
                # `from fastapi.websockets import …` of an invented gzip parameter)
                claim.supported, claim.off_question = False, True
            elif not self._fenced:
                self._prose_before = claim.supported
            self._written_before = claim.supported
        shown = ""
        for held in waiting:  # on the question through the line that points back to them, or not at all
            before = self.checker.check(held, verbatim=self._fenced)
            if before.supported and not claim.supported:
                before.supported, before.off_question = False, True
            self.claims.append(before)
            shown += self._show(held, before) if before.supported else ""
        self.claims.append(claim)
        return shown + (self._show(sentence, claim) if claim.supported else "")

    def _show(self, sentence: Sentence, claim: Claim) -> str:
        markers = "".join(f"[{self._number(span)}]" for span in claim.spans)
        text = as_read(sentence.text)
        cut = len(text.rstrip(_END_PUNCT))
        zh = has_cjk(text)
        shown = f"{text[:cut]}{'' if zh else ' '}{markers}{text[cut:]}"
        after_list = bool(self._parts) and "\n- " in self._parts[-1]  # a quoted list ends its line
        lead = sentence.lead if "\n" in sentence.lead else "\n" if after_list else "" if zh or not self._parts else " "
        self._parts.append(lead + shown)
        return lead + shown

    def _on_question(self, claim: Claim) -> bool:
        """The sentence or the lines around its citation (ANCHOR_REACH either side: "If you need to enforce it,
        use `…Strict`" answers of the `grant_type` named two lines up) say a code name the question asks about."""
        if not self.anchors:
            return True
        said = normalise(self._around(claim))
        if any(
            holds(said, anchor) or _method_named(said, anchor) or _path_named(said, anchor) for anchor in self.anchors
        ):
            return True
        return self._tied_in_section(claim) or self._goes_on(claim)

    def _goes_on(self, claim: Claim) -> bool:
        """A sentence opening by pointing back ("If you do this, you have to make sure each one of your *path
        operation functions* has a unique name") is on the question when the sentence before it is, and cites
        lines just above its own in the same passage: it says the rest of what that one says."""
        before = self.claims[-1] if self.claims else None
        if before is None or not before.supported or not before.spans or not claim.spans:
            return False
        if not refers_back(without_markers(claim.sentence)):
            return False
        (index, _, end), (own, start, _) = before.spans[-1], claim.spans[0]
        return index == own and 0 < start - end <= FOLLOW_REACH

    def _tied_in_section(self, claim: Claim) -> bool:
        """Asked about "the summary parameter of get_openapi", a sentence writing as code a word the question
        says (`summary`) is on the question when the section of a line it cites names the anchor: the section
        ties the two, as the parameter list of `get_openapi()` does, and the note about `summary` sits further
        down. So is a sentence saying the question's rare words right under a line that names the anchor."""
        if {code.lower() for code in CODE.findall(claim.sentence)} & self._question_words:
            sections = normalise(" ".join(section_lines(self.sources[i], a) for i, a, _ in claim.spans))
            return any(holds(sections, anchor) for anchor in self.anchors)
        # or says the question's rare words itself, and the code named last above it is the anchor: "Here FastAPI
        # won't get confused because you are using `Depends`" under "Notice that we declare the type of
        # `current_user` …" (not "将以 `str` 表示" in the item on `UUID`, asked of `datetime.timedelta`)
        subjects = {t for t in self.subjects if has_cjk(t) == has_cjk(claim.sentence)}
        if not subjects or not subjects <= set(tokenize(claim.sentence)):
            return False
        above = [code_above(self.sources[i], a) for i, a, _ in claim.spans]
        return any(holds(normalise(line), anchor) for line in above for anchor in self.anchors)

    def _names_all(self, claim: Claim) -> bool:
        """The passages the sentence cites (with their page's title and path) write every rare name the question
        does (`anchors.question_names`); the sentence saying a name its passages do not is no evidence of it."""
        if not self.names:
            return True
        held: set[str] = set()
        for index in {i for i, _, _ in claim.spans}:
            if index not in self._passage_terms:
                e = self.sources[index]
                self._passage_terms[index] = set(tokenize(f"{e.title} {e.path}\n{e.text}"))
            held |= self._passage_terms[index]
        self.unnamed |= self.names - held
        return self.names <= held

    def _on_subject(self, claim: Claim) -> bool:
        """A model sentence with nothing checkable (no number, name or code) is held by word overlap alone: it
        must say one of the question's rare words, or cite lines (ANCHOR_REACH either side) that do. "The
        callback function can then be used to process the change data [1]" answered "How do I listen to
        MongoDB change streams?" from release notes that never mention MongoDB."""
        zh = has_cjk(claim.sentence)
        subjects = {t for t in self.subjects if has_cjk(t) == zh}  # words of the other language cannot be compared
        if not subjects:
            return True
        if own := self._own_items(claim.sentence):
            if not any(re.search(r"\d", item) for item in own):
                return True  # a name it gives ("… decided to use Pydantic") is checked as a name
            # a number is of the subject the sentence gives it: "The maximum length of a regular expression
            # pattern that Query accepts is 50 characters" cited to `Query(max_length=50)`, lines about no pattern
            repeated = subjects & set(tokenize(claim.sentence))
            return repeated <= set(tokenize(self._around(claim, with_sentence=False)))
        return bool(subjects & set(tokenize(self._around(claim))))

    def _own_items(self, sentence: str) -> set[str]:
        """What the sentence names that the question does not; a piece of a name the question writes is the
        question's ("pytest" of "pytest-xdist": "After that, you just need to install `pytest`" is about none of
        "run tests in parallel with pytest-xdist")."""
        return checkable(sentence) - self.checker.question_items - self._question_pieces

    def _names_one(self, claim: Claim) -> bool:
        """Asked for a name ("What error type …", "哪个参数"), a model sentence must give one the question does not:
        "The error type … is an **error** response [1]" restated the question."""
        if self._kind is None:
            return True
        asked = self.question.lower()
        found = (name for groups in _NAMED.findall(without_markers(claim.sentence)) for name in groups if name)
        return any(name.lower() not in asked for name in found)

    def _around(self, claim: Claim, with_sentence: bool = True) -> str:
        """The sentence, the lines of its citations (ANCHOR_REACH either side) and the headings they sit under:
        a section's heading names what its lines are about, as the extractive ranking reads them."""
        near = [_span_text(self.sources[i], a - ANCHOR_REACH, b + ANCHOR_REACH) for i, a, b in claim.spans]
        sections = {section_of(self.sources[i], a) for i, a, _ in claim.spans}
        return " ".join([claim.sentence if with_sentence else "", *near, *sorted(sections)])

    def add_file(self, index: int) -> str:
        """A file-discovery answer line: the file's path and title, cited to its first lines. The index itself
        states that the file exists and what it is called; no sentence needs checking."""
        e = self.sources[index]
        end = min(e.end_line, e.start_line + 1) if not e.is_record else e.start_line
        # the title only where the cited lines show it: a passage further down the file does not
        sentence = f"`{e.path}`" + (f" — {e.title}" if e.title and e.start_line <= 1 else "")
        self.claims.append(
            Claim(sentence, True, [(index, e.start_line, end)], [cite(e.path, e.start_line, end, e.page)])
        )
        shown = f"- {sentence} [{self._number((index, e.start_line, end))}]"
        self._parts.append(("\n" if self._parts else "") + shown)
        return ("\n" if len(self._parts) > 1 else "") + shown

    def _number(self, span: tuple[int, int, int]) -> int:
        if span not in self._numbers:
            index, start, end = span
            e = self.sources[index]
            self._numbers[span] = len(self._numbers) + 1
            self.citations.append(
                {
                    "n": self._numbers[span],
                    "source": e.source,
                    "path": e.path,
                    "start_line": start,
                    "end_line": end,
                    "page": e.page,
                    "snippet": " ".join(_span_text(e, start, end).split())[:300],
                    "context_start_line": e.start_line,
                    "context_end_line": e.end_line,
                }
            )
        return self._numbers[span]

    @property
    def body(self) -> str:
        return "".join(self._parts).strip()

    def public_claims(self) -> list[dict]:
        return [c.public() for c in self.claims]


def _span_text(e: Evidence, start: int, end: int) -> str:
    if e.is_record:  # one cited line
        return e.text
    return "\n".join(e.text.split("\n")[max(0, start - e.start_line) : max(0, end - e.start_line + 1)])


def with_references(body: str, citations: list[dict]) -> str:
    if not citations:
        return body
    lines = [f"[{c['n']}] {cite(c['path'], c['start_line'], c['end_line'], c.get('page'))}" for c in citations]
    return body.rstrip() + "\n\nReferences:\n" + "\n".join(lines)


def refusal(zh: bool, sources: list[Evidence]) -> str:
    """A refusal that says what was found instead (or that nothing was)."""
    found = [f"{e.title or e.path} ({e.citation})" for e in sources[:3]]
    if zh:
        head = "知识库中没有找到这个问题的答案。"
        return head + (f"找到的最接近的内容是：{'；'.join(found)}。" if found else "")
    head = "I could not find an answer to this in the knowledge base."
    return head + (f" The closest passages found were: {'; '.join(found)}." if found else "")
