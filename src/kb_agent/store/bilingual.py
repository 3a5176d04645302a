"""A Chinese -> English term lexicon learned from the knowledge base's own translated pages.

Documentation trees often keep a page and its translation side by side (`en/docs/x.md`, `zh/docs/x.md`) with
the same line layout. Line i of one says what line i of the other says, so a Chinese word and the English
stem that keep turning up on the same line pairs translate each other (Dice coefficient over aligned lines).
A Chinese question then also searches the English pages no one translated, which neither keyword search (no
shared terms) nor the small multilingual embedder (the Chinese pages always look closer) reaches.

Only public files feed it: the lexicon is shared by every caller, so a restricted page must not shape it."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kb_agent.text.tokenize import FRAME_STEMS, QUESTION_WORDS, cut_chinese, has_cjk, tokenize

LEXICON_META = "bilingual_lexicon"
# a language segment of a path: what differs between a page and its translation
_LANG = re.compile(r"(?<![^/])(zh|zh-cn|zh-hans|zh_cn|cn|en)(?=/)", re.IGNORECASE)
_ZH_LANGS = {"zh", "zh-cn", "zh-hans", "zh_cn", "cn"}
MIN_DICE = 0.3  # below this a pair is chance co-occurrence on long lines
TRANSLATIONS_PER_WORD = 3
# question words ask, they name nothing a page pairs: 哪里 had learned "claude codex copilot" from one aligned line
ZH_SKIP = {w for w in QUESTION_WORDS if not w.isascii()} | set("哪里 哪儿 多少 几个 多久 何时 什么时候 谁".split())


@dataclass
class Lexicon:
    """zh word -> its English stems, best first; `generation`: the catalog generation it was learned at."""

    generation: int = -1
    pairs: int = 0  # aligned line pairs it was learned from
    words: dict[str, list[str]] = field(default_factory=dict)
    paired: set[str] = field(default_factory=set)  # paths of the pages that have their translation

    def english_terms(self, query: str) -> tuple[list[str], int]:
        """The query's English terms and the translations of its Chinese words, in order, once each; and how
        many of its Chinese words translated."""
        terms: list[str] = []
        translated = 0
        for token in tokenize(query):
            if not has_cjk(token):
                terms.append(token)
            elif token in self.words and token not in ZH_SKIP:
                terms += self.words[token]
                translated += 1
        return list(dict.fromkeys(terms)), translated

    def translated_share(self, query: str) -> float:
        """How much of the query's Chinese it can read: of its words (jieba's precise cut, question words and
        single characters left out), the share it translates whole or by a part (赞助者 by 赞助)."""
        words = [w for w in cut_chinese(query) if has_cjk(w) and len(w) > 1 and w not in ZH_SKIP]
        if not words:
            return 0.0
        return sum(1 for w in words if any(t in self.words for t in [w, *tokenize(w)])) / len(words)

    def as_meta(self) -> str:
        data = {"generation": self.generation, "pairs": self.pairs, "words": self.words, "paired": sorted(self.paired)}
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_meta(cls, raw: str | None) -> Lexicon | None:
        if not raw:
            return None
        try:
            data = json.loads(raw)
            words = {str(k): [str(t) for t in v] for k, v in data["words"].items()}
            return cls(int(data["generation"]), int(data["pairs"]), words, {str(p) for p in data["paired"]})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged entry is relearned at the next index run, never trusted


def translation_pairs(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(Chinese page, English page) pairs: paths that differ only in one language segment."""
    known = set(paths)
    pairs = []
    for path in sorted(known):
        for match in _LANG.finditer(path):
            if match.group(1).lower() not in _ZH_LANGS:
                continue
            english = f"{path[: match.start()]}en{path[match.end() :]}"
            if english in known:
                pairs.append((path, english))
                break
    return pairs


def learn(aligned: Iterable[tuple[str, str]], generation: int, paired: set[str] | None = None) -> Lexicon:
    """Learn from (Chinese line, English line) pairs that say the same thing; `paired`: the pages they come from."""
    zh_count: Counter[str] = Counter()
    en_count: Counter[str] = Counter()
    both: Counter[tuple[str, str]] = Counter()
    n = 0
    for zh_line, en_line in aligned:
        if not has_cjk(zh_line) or has_cjk(en_line):
            continue  # an untranslated line (code, a table of names) teaches nothing
        zh = {w for w in tokenize(zh_line) if has_cjk(w) and w not in ZH_SKIP}
        en = {w for w in tokenize(en_line) if w.isalpha() and len(w) > 2 and w not in FRAME_STEMS}
        if not zh or not en:
            continue
        n += 1
        zh_count.update(zh)
        en_count.update(en)
        both.update((z, e) for z in zh for e in en)
    best: dict[str, list[tuple[float, str]]] = {}
    for (z, e), together in both.items():
        dice = 2 * together / (zh_count[z] + en_count[e])
        # one shared line is evidence only when neither word occurs elsewhere much
        if dice >= MIN_DICE and (together >= 2 or dice >= 0.5):
            best.setdefault(z, []).append((dice, e))
    words = {z: [e for _, e in sorted(c, key=lambda x: (-x[0], x[1]))[:TRANSLATIONS_PER_WORD]] for z, c in best.items()}
    return Lexicon(generation, n, words, paired or set())
