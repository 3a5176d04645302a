"""How an answer line in the other language than the question's is read for it: a Chinese question's words on
an English line, through the glossary the knowledge base's translated pages taught (`store/bilingual.py`) and, on a
page no Chinese page translates, a general dictionary's senses (`text/zh_en.py`); and the English code a Chinese line
writes for a word of the question (`dict` for 字典)."""

from __future__ import annotations

import re

from kb_agent.agent.question_terms import Weights
from kb_agent.text.zh_en import english_stems
from kb_agent.tools.base import Evidence

UNTRANSLATED = 0.25  # credit for a Chinese word an English line holds none of the lexicon's translations of
ECHOED = 0.5  # that credit when a line in the question's language says the names the line shares with it
_CEASE_STEMS = frozenset({"longer", "anymor"})
_NO_MORE = re.compile(r"\bno (?:more|longer)\b|\bnot\b[^.]{0,60}\bany ?more\b", re.I)
_FAMILY_STEM = 6  # a stem this long names one word family: "contribut", not "part" (particular)


def translated(
    words: set[str], said: set[str], source: Evidence, text: str = "", weights: Weights | None = None
) -> dict[str, float]:
    """Of a Chinese question's `words`, those the passage's glossary (or the dictionary) translates: 1.0 where the
    English text's terms (`said`) hold one of the word's translations, UNTRANSLATED where they hold none - less
    than an unreadable word's credit, not nothing: a learned lexicon misses synonyms ("放弃" is "give up" to it, the note says "Drop").
    A word the lexicon reads as "no longer" (不再) is held by a `text` saying so in other words: "no more versions
    will be released" (the lexicon leaves out function words such as "more")."""
    ceased = bool(_NO_MORE.search(text))
    read = {}
    for w in words:
        if w in source.glossary:
            stems = [*source.glossary[w], *(_specific_senses(w, weights) if source.untranslated else ())]
            read[w] = 1.0 if _holds_stem(stems, said) or (ceased and _CEASE_STEMS & set(stems)) else UNTRANSLATED
        elif _holds_stem([t for part, ts in source.glossary.items() if len(part) > 1 and part in w for t in ts], said):
            # a word learned only by a part: 贡献者 (contributor) by 贡献 - read when the part's sense is there; a
            # part can mean something else (所有者 "owner" holds 所有 "all"), so not finding it says nothing
            read[w] = 1.0
        elif source.untranslated and _holds_stem(_specific_senses(w, weights), said):
            # a word the pages never paired, read in a general dictionary's senses (改用: "now uses") on a page no
            # Chinese page answers for; as with a part, a sense missing says nothing - the page may use another
            read[w] = 1.0
    return read


COMMON_SENSE = (
    2.0  # a sense written this commonly (ln of chunks per chunk holding it) tells nothing: "use", "operation"
)


def _specific_senses(word: str, weights: Weights | None) -> list[str]:
    """A general dictionary's English stems for a Chinese word, less those the knowledge base writes on every
    few pages: 工作 is "work" and "operate", and "operations" is on every page of an API's docs."""
    senses = list(english_stems(word))
    if not senses or weights is None:
        return senses
    weight = weights(set(senses))
    return [s for s in senses if weight.get(s, COMMON_SENSE) >= COMMON_SENSE]


def _holds_stem(stems: list[str], said: set[str]) -> bool:
    """A translation's stem, or a longer word of its family: "contribut" (learned from "contribute") in
    "contributors" (stemmed "contributor")."""
    return any(t in said or (len(t) >= _FAMILY_STEM and any(s.startswith(t) for s in said)) for t in stems)


def echoed(held: dict[str, float], comparable: set[str], said_in_own: set[str]) -> bool:
    """Does a line of the question's language say every name this other-language line shares with the question?"""
    shared = {t for t in comparable if held.get(t)}
    return bool(shared) and shared <= said_in_own


_CODE = re.compile(r"`([^`\n]+)`")
# what code abbreviates, as the stems the glossary gives: a prefix alone misleads (`Form` is no "format")
_ABBREVIATED = {
    "dict": "dictionari", "str": "string", "int": "integ", "bool": "boolean", "args": "argument", "arg": "argument",
    "kwargs": "argument", "param": "paramet", "params": "paramet", "config": "configur", "env": "environ",
    "auth": "authent", "func": "function", "obj": "object", "attr": "attribut", "info": "inform", "db": "databas",
    "req": "request", "msg": "messag", "err": "error", "len": "length", "num": "number", "var": "variabl",
}  # fmt: skip


def written_as_code(words: set[str], text: str, source: Evidence) -> dict[str, float]:
    """Of a Chinese question's `words`, those a Chinese line writes only as English code abbreviating the glossary's
    translation: "它接收一个 `dict`" holds 字典 (dictionary)."""
    code = {_ABBREVIATED.get(m.group(1).lower()) for m in _CODE.finditer(text)} - {None}
    if not code:
        return {}
    return {w: 1.0 for w in words if code & set(source.glossary.get(w, ()))}
