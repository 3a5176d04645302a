"""Words the knowledge base never writes. A question asking about "FastAPI's health-check path" or "the size in
megabytes" is about something the documents do not speak of when no passage the caller may read holds 健康 or
"megabytes" at all: the other words of the question (路径, 默认, size, UploadFile) then match passages that
answer a different question. Judged over what the caller may read, so a restricted page changes nothing.

A word the reader misspelt ("sponsered", "paly") or inflected in a way the stemmer does not undo ("spoke")
is not unknown when a passage found for the question writes it nearly so; nor is one whose dictionary lemma some
page writes ("caught": catch), nor a Chinese word an English passage found translates (取代: "replaced")."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from kb_agent.agent.question_terms import symbol_held
from kb_agent.retrieval.exact import pattern, versioned_names
from kb_agent.text.lemmas import lemma_stems
from kb_agent.text.tokenize import has_cjk, mostly_chinese, tokenize
from kb_agent.text.zh_en import english_stems

Held = Callable[[set[str]], set[str]]  # analysed terms -> those some readable chunk holds

# a code name is one name: its pieces being written elsewhere does not make it written
_CODE_NAME = re.compile(r"_|\.|[a-z][A-Z]")
_INITIALS = re.compile(r"^(?:[a-z]{1,2}\.)+[a-z]{0,2}$")  # D.P. Varma, U.S.
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# past forms the stemmer leaves alone, to the stem their other forms share ("spoke" -> speak, speaker)
_IRREGULAR = dict(
    pair.split(":")
    for pair in (
        "spoke:speak wrote:writ written:writ began:begin begun:begin sang:sing sung:sing won:win "
        "bought:buy brought:bring built:build chose:choos chosen:choos drew:draw drawn:draw drove:driv "
        "driven:driv fell:fall felt:feel fought:fight found:found gave:give given:giv grew:grow grown:grow "
        "held:hold kept:keep knew:know known:know led:lead left:leav lost:lose made:make meant:mean met:meet "
        "paid:pay ran:run sold:sell sent:send shot:shoot stood:stand taught:teach thought:think told:tell "
        "took:take taken:take went:go gone:go wore:wear worn:wear"
    ).split()
)


# a word's absence says something only of a vocabulary this rich: a few hundred passages do not write "report"
# though they answer "how do I report a missing item"; a code name is specific at any size
RICH_VOCABULARY = 500  # chunks


def _english_only_name(question: str, texts: list[str]) -> bool:
    """Does a Chinese question write a name that English passages found hold and no Chinese one does ("BDFL
    这个缩写的全称是什么？" over the untranslated management page)? Its Chinese words are then the other language's
    words for that page, as over English pages alone."""
    if not has_cjk(question):
        return False
    names = {t for t in tokenize(question) if not has_cjk(t) and len(t) > 1}
    if not names:
        return False
    held_by: dict[bool, set[str]] = {True: set(), False: set()}
    for text in texts:
        held_by[mostly_chinese(text)] |= names & set(tokenize(text))
    return bool(held_by[False] - held_by[True])


def unknown_terms(
    asked: set[str],
    held: Held,
    question: str = "",
    evidence: Iterable[str] = (),
    chunks: int = RICH_VOCABULARY,
    read: Iterable[str] = (),
) -> set[str]:
    """The asked terms no chunk the caller may read holds - only code names below RICH_VOCABULARY `chunks`.
    A Chinese compound (健康检查) or a hyphenated word
    (keep-alive, written "keep alive" in the text) is known when all its pieces are. Chinese words are judged
    only when some of the evidence found is Chinese: over English pages they are the other language's words,
    not unknown ones (a code name is in no language and always judged). `evidence`: the texts found for the
    question, each with its page's title and path; `read`: the further passages the answer reads, where an
    untranslated English page a name brought in sits."""
    texts, further = list(evidence), list(read)
    zh_pages = any(mostly_chinese(text) for text in texts) and not _english_only_name(question, [*texts, *further])
    names = [t.lower().rstrip(".") for t in re.findall(r"[\w.]+", question) if _CODE_NAME.search(t)]
    asked = {t for t in asked if (zh_pages or not has_cjk(t)) and not _INITIALS.match(t)}
    code_names = {t for t in names if not _INITIALS.match(t + ".")}
    if chunks < RICH_VOCABULARY:
        asked &= code_names
    pieces = {t: [] if t in code_names else [p for p in tokenize(t) if p != t and len(p) > 1] for t in asked}
    # a code name asked in the plural ("operationIds") is written when its singular is ("`operationId`s")
    singular = {t: t[:-1] for t in asked & code_names if re.search(r"[a-z]{2}s$", t) and not t.endswith("ss")}
    probe = set(asked) | {p for parts in pieces.values() for p in parts} | set(singular.values())
    written = {t for text in texts for t in tokenize(text)}  # a page's path and title count too
    in_evidence = probe & written
    # a Chinese word is cut by its context: "不传" is a word of "可以不传它吗" but not of "你不能不传这个参数"
    in_evidence |= {t for t in probe - in_evidence if has_cjk(t) and any(t in text for text in texts)}
    seen = in_evidence | held(probe - in_evidence)
    unsure = {
        t
        for t in asked
        if t not in seen and singular.get(t) not in seen and not (pieces[t] and _cut_into(t, pieces[t], seen))
    }
    # another form of a word not written as asked ("caught": the pages write "catch"; "harder" over a page saying
    # "more difficult", when the knowledge base writes "hard"), read from a dictionary, not guessed
    words = [(w, set(tokenize(w))) for w in _WORD.findall(question)]
    lemmas = {t: set().union(*(lemma_stems(w) for w, analysed in words if t in analysed)) for t in unsure}
    if other_forms := set().union(*lemmas.values()) - seen:
        seen |= (other_forms & written) | held(other_forms - written)

    @functools.cache
    def english_words() -> set[str]:  # read only for a Chinese word still unknown
        return {t for text in [*texts, *further] if not mostly_chinese(text) for t in tokenize(text)}

    def known(term: str) -> bool:
        if term not in unsure or lemmas[term] & seen:
            return True
        # a Chinese word an English page the answer reads says in its own words: 取代 where a release note says
        # "replaced"
        return has_cjk(term) and any(stem in english_words() for stem in english_stems(term))

    # "caret", asked as "^": a page writing `^` writes it
    unknown = {t for t in asked if not known(t) and not any(symbol_held(t, text) for text in texts)}
    unknown |= _stemmed_away(question, asked, [*texts, *further])
    if unknown and texts:
        unknown -= _written_nearly(unknown - code_names, question, texts)
    return unknown | _unwritten_versions(question, texts)


# a suffix the stemmer takes off though it makes another word: "directive" is analysed "direct", which every page
# saying "directly" holds
_OWN_WORD_SUFFIX = re.compile(r"(?<=[a-z]{4})ives?$", re.I)


def _stemmed_away(question: str, asked: set[str], texts: list[str]) -> set[str]:
    """The asked stems of the question's "-ive" words ("directive": direct) no passage found writes as such."""
    cut = {
        word: stem[0]
        for word in _WORD.findall(question)
        if _OWN_WORD_SUFFIX.search(word)
        and (stem := tokenize(word))
        and stem[0] in asked
        and len(stem[0]) < len(word) - 2
    }
    if not cut:  # most questions: the passages' text is not read
        return set()
    said = " ".join(texts).lower()
    return {
        stem for word, stem in cut.items() if not re.search(rf"\b{re.escape(word.lower().removesuffix('s'))}", said)
    }


def _cut_into(term: str, pieces: list[str], seen: set[str]) -> bool:
    """Is `term` written piece by piece: all its `pieces` seen, or, for a Chinese word, the word cut end to end into
    seen pieces? The tokenizer's pieces of 测试工具 overlap (测试, 试工, 工具): 试工 is no word of it to look for."""
    if all(p in seen for p in pieces):
        return True
    if not has_cjk(term):
        return False
    held = {p for p in pieces if p in seen}
    ends = {0}
    for at in range(len(term)):
        if at in ends:
            ends |= {at + len(p) for p in held if term.startswith(p, at)}
    return len(term) in ends


def _unwritten_versions(question: str, texts: list[str]) -> set[str]:
    """A versioned name (HTTP/3) no evidence writes literally: its pieces, "HTTP" and "3", are written
    everywhere. Exact-first search fetches every readable passage that writes it, so the evidence is where it
    would be."""
    if not texts:
        return set()
    return {name for name in versioned_names(question) if not any(pattern(name).search(t) for t in texts)}


def _written_nearly(terms: set[str], question: str, texts: list[str]) -> set[str]:
    """The terms whose question word the evidence writes nearly so: one slip (two in a long word) with the
    same first letter, or the same long beginning (precision / precisionist)."""
    words = {w.lower() for text in texts for w in _WORD.findall(text) if len(w) > 2}
    found: set[str] = set()
    for raw in {w.lower() for w in _WORD.findall(question)}:
        stems = set(tokenize(raw)) & terms
        if not stems:
            continue
        base = _IRREGULAR.get(raw, raw)
        if any(_near(base, w) for w in words):
            found |= stems
    return found


def _near(a: str, b: str) -> bool:
    if a[0] != b[0]:
        return False
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 5 and long_.startswith(short):
        return True
    return _slips(a, b, 1 if max(len(a), len(b)) <= 8 else 2)


def _slips(a: str, b: str, limit: int) -> bool:
    """Optimal string alignment distance (a swap of neighbours is one slip) at most `limit`."""
    if abs(len(a) - len(b)) > limit:
        return False
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return False
        before, row = row, current
    return row[-1] <= limit
