"""The lexicon job: after an index run, relearn the Chinese -> English lexicon from the translated pages.

Like the graph job it runs inside the index run, never on the read path."""

from __future__ import annotations

from collections.abc import Iterator

from kb_agent.store.base import CatalogReader, KnowledgeBase
from kb_agent.store.bilingual import Lexicon, learn, translation_pairs
from kb_agent.store.catalog import lines_of


def sync_lexicon(kb: KnowledgeBase) -> bool:
    """Relearn the KB's lexicon when the catalog changed since it was learned; True when it was."""
    catalog = kb.catalog
    stored = kb.bilingual_lexicon()
    if stored is not None and stored.generation == catalog.generation:
        return False
    public = {f.path: f.source for f in catalog.all_files() if not f.acl}
    pairs = translation_pairs(public)
    paired = {path for pair in pairs for path in pair}
    lexicon = (
        learn(_aligned(catalog, public, pairs), catalog.generation, paired) if pairs else Lexicon(catalog.generation)
    )
    kb.store_bilingual_lexicon(lexicon)
    return True


def _aligned(
    catalog: CatalogReader, sources: dict[str, str], pairs: list[tuple[str, str]]
) -> Iterator[tuple[str, str]]:
    """(Chinese line, English line) at the same line number of each page pair, as the chunks hold them."""
    for zh, en in pairs:
        zh_lines = lines_of(catalog.chunks_of_source(sources[zh]))
        en_lines = lines_of(catalog.chunks_of_source(sources[en]))
        for number, line in zh_lines.items():
            if (other := en_lines.get(number)) is not None:
                yield line, other
