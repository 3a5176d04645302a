"""Whether the evidence found can answer the question at all, decided before any answer is written: it holds
the question's key terms (weighted by rarity), the rarest of them when that is a name, and - asked for a
version, a number or an end - a line that states one. A question that fails is refused without a model call;
`strong_first_hop` says whether one search already answers a long question (no router call)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable

from kb_agent.agent.answer_types import asked_types
from kb_agent.agent.evidence_units import Unit, terms
from kb_agent.agent.extractive import COVERAGE, rank, remembered, without_changelog
from kb_agent.agent.other_language import translated
from kb_agent.agent.question_terms import Weights, comparable_terms, key_terms, rarity, term_credits
from kb_agent.text.tokenize import cut_chinese, has_cjk, tokenize, zh_tag
from kb_agent.tools.base import Evidence

Held = Callable[[set[str]], set[str]]  # terms -> those some passage the caller may read holds

# what each answer type (`answer_types.asked_types`) asks for; an address is left out of `value_missing`: "At
# which address does the constable live?" asks for a street, which the URL shape cannot see
_VALUE_KINDS = ("a version", "a number", None, "an end", "a status code", "a date", "a year")


def covers(question: str, sources: list[Evidence], weights: Weights | None = None, held: Held | None = None) -> bool:
    """Does the evidence hold the question's key terms (weighted by rarity) - half of them together, a third
    in one source - and the rarest of them when it is a name the knowledge base writes? If not, the question is
    refused without a model call. Evidence in the other language is judged on the terms it could share with
    the question."""
    asked = key_terms(question)
    weights = remembered(weights)  # read once: the rarity, and each source's English senses of a Chinese word
    weight = _rarity(asked, sources, weights)
    together, best = _coverage(question, asked, weight, sources, weights=weights)
    return together >= COVERAGE and best >= 1 / 3 and _missing_name(question, asked, weight, sources, held) is None


def _rarity(asked: set[str], sources: list[Evidence], weights: Weights | None) -> dict[str, float]:
    return rarity(asked, [Unit(e.text, 0, 0, terms(e.text)) for e in sources], weights) if asked else {}


# a word the question names: code, an identifier, or a capitalised word not opening the question ("Gevent",
# "Redis"); not a hyphenated word ("keep-alive", "self-host": the docs may write it "keep alive")
NAMED = re.compile(
    r"`[^`]+`|\b[A-Za-z_]\w*(?:[_.]\w+)+\b|\b[A-Za-z]*[a-z][A-Z]\w*\b|\b[A-Z]{2,}[a-z]\w*\b"
    r"|(?<=[^\s.?!。？！] )(?<!-)[A-Z][A-Za-z0-9]+\b(?!-)"
)


def named_terms(question: str) -> set[str]:
    """The analysed terms of the names the question writes (`NAMED`)."""
    return {t for m in NAMED.finditer(question) for t in tokenize(m.group().strip("`"))}


def value_missing(question: str, sources: list[Evidence], weights: Weights | None = None) -> str | None:
    """What the question asks for (a version, a number, an end) when no line of the sources that
    covers the question states one: then no answer can copy it from them, and a model asked anyway answers
    something else ("FastAPI 的作者花了多少钱…" - how much money - was answered "the author never studied
    the spec"). None when the question asks for none of these or some line states one."""
    asked = [kind for i in asked_types(question) if (kind := _VALUE_KINDS[i])]
    if not asked or not sources or rank(question, sources, None, weights):
        return None
    return asked[0]


def missing_name(
    question: str, sources: list[Evidence], weights: Weights | None = None, held: Held | None = None
) -> str | None:
    """The question's rarest key term when it is a name some passage of the knowledge base writes (`held`: the
    terms it holds; without it, any) but no source found holds: "How do I make Gevent the event loop of a
    FastAPI app?" over passages about the event loop that never say Gevent is not answered by them, however
    much of the rest they cover. None when every such name is held, when the rarest term is a plain word (a
    paraphrase may not use it), or when the knowledge base never writes the name (a misspelt "Brittish" says
    nothing of the passages found; a word no page writes is `vocabulary`'s to judge)."""
    asked = key_terms(question)
    return _missing_name(question, asked, _rarity(asked, sources, weights), sources, held)


def _missing_name(
    question: str, asked: set[str], weight: dict[str, float], sources: list[Evidence], held: Held | None
) -> str | None:
    """`missing_name` with the question's key terms and their weights already read."""
    names = named_terms(question) & asked
    if names and held is not None:
        with contextlib.suppress(Exception):  # the vocabulary is a refinement: without it every name counts
            names &= held(names)
    if not names or not sources:
        return None
    rarest = max(weight.values())
    rarest_names = [name for name in sorted(names) if weight.get(name, 0.0) >= rarest]
    if not rarest_names:
        return None
    # a change-log entry holds no name for a how-to question (u710: OpenTelemetry in an "Add External Link" entry)
    said = set().union(*(terms(f"{e.title} {e.path} {without_changelog(e.text, question)}") for e in sources))
    return next((as_written(question, name) for name in rarest_names if name not in said), None)


def as_written(question: str, term: str) -> str:
    """The question's own word for an analysed name ("kubernet" -> "Kubernetes"), for a notice."""
    return next((m.group().strip("`") for m in NAMED.finditer(question) if term in tokenize(m.group())), term)


STRONG_FIRST_HOP = 0.75  # of the question's key terms (by rarity) one source holds


def strong_first_hop(question: str, sources: list[Evidence], weights: Weights | None = None) -> bool:
    """Does one source hold most of the question's key terms? Measured on the sets: long FastAPI questions
    of one lookup mostly 0.85-1.0 (all terms: 1.0 is too strict for a 15-word question); the three multi-hop
    questions of no rule shape 0.46-0.57 (their first hop names one entity of two)."""
    asked = key_terms(question)
    weights = remembered(weights)
    return _coverage(question, asked, _rarity(asked, sources, weights), sources, weights=weights)[1] >= STRONG_FIRST_HOP


def _coverage(
    question: str,
    asked: set[str],
    weight: dict[str, float],
    sources: list[Evidence],
    short_forms: bool = False,
    weights: Weights | None = None,
) -> tuple[float, float]:
    """(share of the question's key terms the sources hold together, the most one source holds), by rarity."""
    if not asked:
        return (1.0, 1.0) if sources else (0.0, 0.0)
    zh = has_cjk(question)
    total = sum(weight.values()) or 1.0
    union: dict[str, float] = {}
    best = 0.0
    for e in sources:
        e_zh = has_cjk(e.text)
        comparable = comparable_terms(asked, zh, e_zh)
        held = terms(e.text) | terms(f"{e.title} {e.path}")
        # an English passage is read for a Chinese question's words its glossary translates
        read = (
            {w for w, c in translated(asked - comparable, held, e, e.text, weights).items() if c == 1.0}
            if zh and not e_zh
            else set()
        )
        comparable = comparable | read
        if not comparable:
            continue
        said = f"{e.title} {e.path} {e.text}"
        credit = {**term_credits(held, said, comparable, short_forms), **dict.fromkeys(read, 1.0)}
        for t, c in credit.items():
            union[t] = max(union.get(t, 0.0), c)
        share = sum(weight[t] * c for t, c in credit.items()) / (sum(weight[t] for t in comparable) or 1.0)
        best = max(best, share)
        if e_zh != zh and all(credit.get(t) == 1.0 for t in comparable):
            union.update(dict.fromkeys(asked, 1.0))  # cross-lingual: its comparable terms stand for the question
    return sum(weight[t] * c for t, c in union.items()) / total, best


def holds_the_rest(question: str, unheard: set[str], sources: list[Evidence]) -> bool:
    """Does one source hold every key term of the question but the `unheard` ones, each fully? (Unweighted: the
    rest must all be there, however common.)"""
    asked = key_terms(question) - unheard
    return bool(asked) and _coverage(question, asked, dict.fromkeys(asked, 1.0), sources, short_forms=True)[1] >= 1.0


# a Chinese verb, adverb or adjective is wording as a plain English word is: 续期 (renew) where the pages say 更新;
# so is a state word ("z": 不整洁 where the page says 不太简洁) and a negated adjective (不安全)
_WORDING_TAGS = frozenset({"v", "vn", "vd", "vg", "vi", "a", "ad", "an", "d", "z"})


def _wording(term: str) -> bool:
    """A Chinese word that says how rather than what: a verb, an adjective, a state word, or one negated."""
    return zh_tag(term) in _WORDING_TAGS or (term[:1] in "不没未" and zh_tag(term[1:]) in _WORDING_TAGS)


def discounted(weights: Weights | None, wording: set[str]) -> Weights | None:
    """The store's term weights with the asker's own wording - a word no page writes ("reachable" where the page
    says "publicly accessible") - counting nothing: it holds no passage apart from another, and at its rarity
    it outweighed the words every answering line shares with the question."""
    if weights is None or not wording:
        return weights
    return lambda asked: {t: 0.0 if t in wording else w for t, w in weights(asked).items()}


# an English word whose ending says how, not what: "reachable", "quickly", "crashed"; "canary" (a thing) is no wording
_HOW_ENDING = re.compile(r"(?:able|ible|ly|ful|ous|ive|ed|ing)$", re.I)


def how_words(question: str, unheard_words: set[str]) -> set[str]:
    """The terms of `unheard_words` that only say how: a Chinese verb or adjective (`_wording`), an English word
    with an adjective's, adverb's or participle's ending."""
    english = {t for w in re.findall(r"[A-Za-z]+", question) if _HOW_ENDING.search(w) for t in tokenize(w)}
    return {t for t in unheard_words if (has_cjk(t) and _wording(t)) or t in english}


def still_unknown(question: str, unknown: set[str], sources: list[Evidence]) -> set[str]:
    """The question's words no page writes (`vocabulary`), less the asker's own wording: a plain English word
    ("carry", "risky", "keyboard") or a Chinese verb ("续期") is not a thing the documents lack when one source
    holds every other key term. A name the question writes (Kerberos) or a Chinese noun (调度器) stays unknown."""
    named = named_terms(question)
    thing = [t for t in unknown if t in named or (has_cjk(t) and not _wording(t))]
    if not unknown or thing:
        return unknown
    # the rest: the question's names and nouns; its other verbs are wording too (借助 beside 续期)
    wording = {t for t in key_terms(question) if has_cjk(t) and _wording(t)}
    return set() if holds_the_rest(question, unknown | wording, sources) else unknown


# "Which compression format …?", "哪种压缩格式": the words before the kind's noun say which kind of it is asked for
_KIND_PHRASE_EN = re.compile(r"\bwhich\s+((?:[a-z][\w-]*\s+){1,2})(format|algorithm|protocol|encoding|scheme|codec)s?\b",
                             re.I)  # fmt: skip
_KIND_PHRASE_ZH = re.compile(
    r"(?:哪种|哪一种|哪类|什么样的)([\u4e00-\u9fff]{2,6}?)(?=[的是可用能会在来最更被为有与和及？?，,。\s]|$)"
)


def kind_unknown(question: str, sources: list[Evidence]) -> str | None:
    """The kind a "Which compression format …?" question asks for, when no source speaks of that kind at all (no
    passage says "compression"): then whatever format a line names is not one of it ("response_model 支持 JSON
    格式" to "支持哪种压缩格式"). None when the question asks no such kind or a source holds each of its words."""
    if not sources:
        return None
    if (en := _KIND_PHRASE_EN.search(question)) is not None:
        phrase, words = en.group(0), sorted(terms(en.group(1)))
    elif (zh := _KIND_PHRASE_ZH.search(question)) is not None:
        phrase, cut = zh.group(1), [w for w in cut_chinese(zh.group(1)) if has_cjk(w)]
        if len(cut) == 1:  # one word (压缩算法, 数据格式): its pieces, the last one the kind's noun
            cut = [p for p in tokenize(cut[0]) if p != cut[0] and has_cjk(p)] or cut[:0]
        words = cut[:-1]  # 压缩 of 压缩 + 格式; none of 流程
    else:
        return None
    said = " ".join(e.text.lower() for e in sources)
    held = set().union(*(terms(e.text) for e in sources))
    missing = [w for w in words if w not in held and not (has_cjk(w) and w in said)]
    return phrase if words and missing else None
