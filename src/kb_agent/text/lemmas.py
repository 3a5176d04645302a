"""English lemmas for the forms the stemmer cannot bring home ("caught" -> catch, "children" -> child), from
lemminflect's bundled tables (MIT). A fallback for a question word no page writes as asked: the pages may write
another form of it."""

from __future__ import annotations

from functools import lru_cache

from kb_agent.text.tokenize import tokenize


@lru_cache(maxsize=4096)
def lemma_stems(word: str) -> frozenset[str]:
    """The stems of `word`'s dictionary lemmas other than its own stem; empty for a word the tables do not list
    (no guessing: a rule-made lemma of an unknown word is a made-up word)."""
    try:
        from lemminflect import getAllLemmas
    except ImportError:  # an install without it judges the word as written
        return frozenset()
    own = set(tokenize(word))
    lemmas = getAllLemmas(word.lower())
    return frozenset({stem for forms in lemmas.values() for lemma in forms for stem in tokenize(lemma)} - own)
