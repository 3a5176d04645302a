"""A Chinese query's search of the English pages no one translated, through the lexicon each index run learns
from the knowledge base's translated pages (`store/bilingual.py`) and, for the words it does not read, a bundled
dictionary's senses (`text/zh_en.py`).

Without it such a page is out of reach of a Chinese question: no shared terms for BM25, and the small multilingual
embedder always finds the Chinese pages closer. The search runs only when the lexicon reads most of the question
and, where the question writes a name, only among the pages that write it (in their text, title or headings) and only
when no Chinese page writes it too - unless it asks which release brought something, which only the untranslated
change log says; its best hits come next after the fused top k."""

from __future__ import annotations

import re

from kb_agent.governance.access import AccessFilter
from kb_agent.store.base import KnowledgeBase
from kb_agent.store.bilingual import ZH_SKIP, Lexicon
from kb_agent.store.records import Chunk
from kb_agent.text.tokenize import has_cjk, mostly_chinese, tokenize
from kb_agent.text.zh_en import english_stems

RETRIEVER = "bm25_translated"
TRANSLATED_SHARE = 0.6  # of a Chinese query's words the lexicon must translate for its English search to run
TRANSLATED_SEATS = 2  # its best hits placed next after the fused top k
SUBJECT_SHARE = 0.2  # a name in this share of a knowledge base's chunks is its subject ("FastAPI" in its docs)


class Lexicons:
    """Each knowledge base's lexicon, read again only when an index run changed the KB."""

    def __init__(self) -> None:
        self._cached: dict[str, tuple[int, Lexicon | None]] = {}

    def of(self, kb: KnowledgeBase) -> Lexicon | None:
        generation = kb.catalog.generation
        cached = self._cached.get(kb.name)
        if cached is None or cached[0] != generation:
            cached = self._cached[kb.name] = (generation, kb.bilingual_lexicon())
        return cached[1]

    def glossary(self, kbs: list[KnowledgeBase], query: str) -> dict[str, list[str]]:
        """The query's Chinese words the knowledge bases' lexicons translate, with their English stems."""
        words = [w for w in dict.fromkeys(tokenize(query)) if has_cjk(w) and w not in ZH_SKIP]
        glossary: dict[str, list[str]] = {}
        for kb in kbs:
            if (lexicon := self.of(kb)) is not None:
                for word in words:
                    glossary[word] = list(dict.fromkeys([*glossary.get(word, []), *lexicon.words.get(word, [])]))
        return {w: stems for w, stems in glossary.items() if stems}

    def untranslated(self, kb: KnowledgeBase, path: str, text: str) -> bool:
        """Is this an English passage of a page no Chinese page of the knowledge base translates?"""
        if mostly_chinese(text):
            return False
        lexicon = self.of(kb)
        return lexicon is None or path not in lexicon.paired

    def lists(
        self, kbs: list[KnowledgeBase], query: str, pool: int, access: AccessFilter, weight: float,
        kb_weight: dict[str, float],
    ) -> list:  # fmt: skip
        """(retriever, weight, [((kb, chunk id), score) …]) per knowledge base whose lexicon reads the query."""
        lists = []
        asks_release = bool(_ASKS_RELEASE.search(query))
        # asked which release: "version", "start" and "from" match every release note, the change asked about tells
        # them apart
        unframed = _RELEASE_FRAME.sub(" ", query)
        for kb in kbs:
            lexicon = self.of(kb)
            if lexicon is None:
                continue
            terms, translated = lexicon.english_terms(unframed)
            # "在 WebSocket 中抛出哪个异常…": where the question writes a name, only the pages that write it (the
            # translated words alone reach release notes sharing common words), and then however little of the
            # rest the lexicon reads ("BDFL 这个缩写的全称是什么？")
            names = rare_names(kb, query)
            if not names and (not translated or lexicon.translated_share(query) < TRANSLATED_SHARE):
                continue  # "内置的限流中间件" read as "middleware" alone searches for something else
            if names and not asks_release and _written_in_chinese(kb, names, access):
                continue  # "Cookie 可以在依赖项中设置吗？": the Chinese pages answer; reference pages only crowd them
            # a change log's words are the dictionary's more than the pages': asked which release, every word's senses
            learned = None if asks_release else lexicon.words
            terms = list(dict.fromkeys([*terms, *_dictionary_terms(unframed, learned)]))
            hits = kb.lexical.search(" ".join(terms), pool, access)
            stored = kb.catalog.get_chunks([i for i, _ in hits])
            # a page with its translation is reached by the plain search already; this list is for the rest
            found = [
                ((kb.name, i), s)
                for i, s in hits
                if i in stored
                and stored[i].chunk.path not in lexicon.paired
                and (not names or names <= _written(stored[i].chunk))
            ]
            lists.append((RETRIEVER, weight * kb_weight.get(kb.name, 1.0), found))
        return lists


def _dictionary_terms(query: str, learned: dict[str, list[str]] | None = None) -> list[str]:
    """The dictionary's senses of the query's Chinese words the `learned` lexicon does not read (渠道 "channel":
    "Sponsors support FastAPI … mainly through GitHub Sponsors"); of every word without it. Asked which release,
    every word: the lexicon read 传播 (propagate) as "spike", "viral", and "Allow custom middlewares to raise
    `HTTPException`s and propagate them" is the note asked for. Elsewhere a learned word's senses only widen the
    search: they reached English lines about something else ("… still supports Pydantic v1" beside an answer about
    HTTPS)."""
    words = [
        w
        for w in dict.fromkeys(tokenize(query))
        if has_cjk(w) and w not in ZH_SKIP and (learned is None or w not in learned)
    ]
    return list(dict.fromkeys(t for w in words for t in english_stems(w)))


def _written(chunk: Chunk) -> set[str]:
    """The terms a passage writes, its page's title and headings with it: "FastAPI People" is the title of the page
    whose "About the data" section says how often its data was calculated."""
    return set(tokenize(" ".join([chunk.title or "", *chunk.heading_path, chunk.text])))


# asked which release brought something: a change log answers, and change logs are rarely translated - a Chinese
# page that writes the name tells how to use it, not since when ("哪个版本开始可以通过 openapi_url=None …")
_ASKS_RELEASE = re.compile(r"(?:哪个|什么|哪一)版本|哪一版|版本号|(?:什么时候|何时)(?:发布|加入|引入|开始支持|支持)")
_RELEASE_FRAME = re.compile(r"(?:从\s*)?(?:哪个|哪一个|哪一|什么)\s*版本号?\s*(?:开始|起)?|版本号")
_DATE_PART_ZH = re.compile(r"(?<![\d.])(\d{1,2})\s*(?:月|日|号)")
NAME_PROBE = 20  # passages a name's own search reads for a Chinese one that writes it


def _written_in_chinese(kb: KnowledgeBase, names: set[str], access: AccessFilter) -> bool:
    """Does a Chinese passage the caller may read write every one of the names?"""
    hits = kb.lexical.search(" ".join(sorted(names)), NAME_PROBE, access)
    stored = kb.catalog.get_chunks([i for i, _ in hits])
    return any(mostly_chinese(s.chunk.text) and names <= set(tokenize(s.chunk.text)) for s in stored.values())


def rare_names(kb: KnowledgeBase, query: str) -> set[str]:
    """The names (identifiers, products, versions) a Chinese query writes, other than the knowledge base's
    subject, as analysed terms."""
    # a month or a day in a Chinese date ("2026 年 7 月") is written "July 2026" on an English page: no name
    dated = set(_DATE_PART_ZH.findall(query))
    names = [t for t in dict.fromkeys(tokenize(query)) if not has_cjk(t) and t not in dated]
    if not names:
        return set()
    counts, chunks = kb.lexical.doc_freqs(names)
    return {name for name, n in counts.items() if n < SUBJECT_SHARE * chunks}


def with_translated(ranked: list, lists: list, k: int) -> list:
    """The translated list's best hits come next after the top k, wherever fusion put them: fused by rank, a list
    only one retriever holds ranks below everything two agree on, and an untranslated page is found by this list
    alone. Next, not in: the top k the others agree on stays whole (the answer often is the Chinese page), and
    the search tool reads a retriever's best passages from just below it."""
    seated = {key for name, _, found in lists if name == RETRIEVER for key, _ in found[:TRANSLATED_SEATS]}
    moving = [r for r in ranked[k:] if r[0] in seated]
    if not moving:
        return ranked
    moved = {r[0] for r in moving}
    return ranked[:k] + moving + [r for r in ranked[k:] if r[0] not in moved]
