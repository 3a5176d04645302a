"""One analyzer for every lexical path (BM25 index, grep rescoring, queries).

Chinese runs go through jieba's search mode (words plus their sub-words); other text is lowercased and
Snowball-stemmed. Identifiers stay findable whole *and* by their parts: `KB_AGENT_MAX_ITERATIONS`,
`snake_case`, `CamelCase`, `LANG-1234` each produce the unstemmed whole token plus stemmed parts.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache

import Stemmer

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9_]+(?:[-.'][A-Za-z0-9_]+)*")
_CJK_RE = re.compile(rf"[{_CJK}]")
_SEP_RE = re.compile(r"[_\-.']+")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Lucene's default English stop set (what Anserini's BM25 baselines use).
EN_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
# words that make a question but say nothing about where its answer is (grep patterns, answer matching)
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does did do can could should would is are was were "
    "tell show explain describe list find please about".split()
) | frozenset(
    "如何 什么 怎么 怎样 哪些 哪个 哪种 哪类 哪一个 哪一种 为什么 是否 可以 请问 告诉 一下 关于 介绍 "
    "大概 大约 大致 "  # "about" in Chinese: a hedge on the number asked
    "列举 列出 提到 提及 除了 "  # "… 还列举了哪些 …": what a page lists ("list"), and "besides"
    "之所以".split()  # "… 之所以能工作，是 …": "the reason why"
)
# pronouns and auxiliaries: they shape a question or an answer and state nothing of its subject
FUNCTION_WORDS = frozenset(
    "i me my you your we our us them its his her him those has have had been being "
    "myself yourself yourselves ourselves itself themselves himself herself".split()  # "… the class myself?"
)
ZH_STOPWORDS = frozenset("的 了 是 在 和 与 及 或 也 就 都 而 被 把 这 那 个 之 于 为 以 着 过 吗 呢 吧 啊".split())

MAX_TOKEN_CHARS = 64
_stemmer_local = threading.local()
_jieba_lock = threading.Lock()
_jieba = None


def _stem(word: str) -> str:
    stemmer = getattr(_stemmer_local, "stemmer", None)
    if stemmer is None:  # PyStemmer objects are not thread-safe
        stemmer = _stemmer_local.stemmer = Stemmer.Stemmer("english")
    return stemmer.stemWord(word)


def _get_jieba():
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


@lru_cache(maxsize=65536)
def _word_tokens(raw: str) -> tuple[str, ...]:
    lower = raw.lower()
    if lower.endswith("'s"):
        lower, raw = lower[:-2], raw[:-2]
    pieces = [p for p in _SEP_RE.split(raw) if p]
    parts: list[str] = []
    for piece in pieces:
        parts.extend(_CAMEL_RE.findall(piece) or [piece])
    if len(parts) <= 1:
        if lower in EN_STOPWORDS or not lower:
            return ()
        return (_stem(lower),)
    out = [lower.strip("_-.'")]  # the identifier as written, for exact look-ups
    for part in parts:
        part = part.lower()
        if part and part not in EN_STOPWORDS:
            out.append(_stem(part))
    return tuple(out)


def tokenize(text: str) -> list[str]:
    """Analyze text into index/query terms (order kept, duplicates kept for term frequency)."""
    tokens: list[str] = []
    for match in _RUN_RE.finditer(text):
        run = match.group(0)
        if _CJK_RE.match(run):
            for word in _get_jieba().cut_for_search(run):
                if word and word not in ZH_STOPWORDS:
                    tokens.append(word)
        elif len(run) <= MAX_TOKEN_CHARS:  # longer runs are hashes, base64 blobs...
            tokens.extend(_word_tokens(run))
    return tokens


def has_cjk(text: str) -> bool:
    return bool(_CJK_RE.search(text))


def cjk_chars(text: str) -> int:
    """How many Chinese characters the text holds."""
    return len(_CJK_RE.findall(text))


def mostly_chinese(text: str) -> bool:
    """A Chinese page, not an English one that quotes a Chinese word (a release note, a language menu)."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(1 for c in letters if has_cjk(c)) >= 0.2 * len(letters)


def cut_chinese(text: str) -> list[str]:
    """jieba's precise segmentation (no overlapping sub-words), for building literal patterns."""
    return list(_get_jieba().cut(text))


def zh_tag(word: str) -> str | None:
    """The part of speech jieba's dictionary gives a Chinese word (n noun, v verb, vn verbal noun, r pronoun, m
    numeral …), None for a word it lacks. Read from the dictionary, not the sentence: a question's own cut may
    differ from a page's."""
    import jieba.posseg

    _get_jieba()
    return jieba.posseg.dt.word_tag_tab.get(word)


def guessed_word(word: str) -> bool:
    """A two-character Chinese "word" jieba's dictionary lacks: its HMM glued two characters that only met in
    this sentence ("测试时用" -> 测试 / 时用), or three across a particle. Not a word a passage will repeat."""
    if not has_cjk(word) or len(word) not in (2, 3) or _get_jieba().dt.FREQ.get(word):  # 0: a prefix, no word
        return False
    # three characters glued across a conjunction or particle: "依赖项和子依赖项" -> 依赖 / 项和子
    return len(word) == 2 or any(c in ZH_STOPWORDS for c in word[1:-1])


# the stems of the English question and function words: an English translation of a Chinese word says nothing by
# one of these (the learned lexicon's pairs, the dictionary's senses)
FRAME_STEMS = frozenset(t for w in QUESTION_WORDS | FUNCTION_WORDS if w.isascii() for t in tokenize(w))
