"""On-disk, incremental BM25 index (tantivy) over pre-analyzed terms, ACL filter inside the query."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import tantivy

from kb_agent.governance.access import PUBLIC_TAG, AccessFilter
from kb_agent.store.records import Chunk
from kb_agent.text.tokenize import tokenize

_WRITER_HEAP = 128_000_000


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("id", stored=True, indexed=True, fast=True)
    builder.add_text_field("source", stored=False, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_text_field("acl", stored=False, tokenizer_name="raw")
    return builder.build()


def lexical_text(chunk: Chunk) -> str:
    """What BM25 sees: the title twice (a field boost: +0.8 to +1.7 nDCG@10 on SciFact and HotpotQA),
    the heading path, the text, and short metadata values (ticket keys, types, releases)."""
    meta = " ".join(
        str(v) for k, v in chunk.metadata.items() if k != "record_id" and isinstance(v, str) and len(v) < 100
    )
    return "\n".join(p for p in (chunk.title, chunk.title, " ".join(chunk.heading_path), chunk.text, meta) if p)


class LexicalIndexDamaged(RuntimeError):
    """The tantivy folder cannot be opened; `kb-agent repair` rebuilds it from the catalog."""


class LexicalIndex:
    def __init__(self, folder: Path, *, on_disk: bool = True):
        """`on_disk=False`: an empty stand-in for a damaged index, so readers still run (and say so)."""
        self.folder = folder
        self.schema = _schema()
        self._writer: tantivy.IndexWriter | None = None
        if not on_disk:
            self.index = tantivy.Index(self.schema)
            return
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self.index = tantivy.Index(self.schema, path=str(folder))
        except ValueError as exc:  # tantivy reports a damaged meta.json / segment as ValueError
            raise LexicalIndexDamaged(f"the keyword index in {folder} cannot be opened ({exc})") from exc

    @classmethod
    def recreate(cls, folder: Path) -> LexicalIndex:
        """An empty index in place of whatever is in `folder` (the caller refills it from the catalog)."""
        shutil.rmtree(folder, ignore_errors=True)
        return cls(folder)

    # -- writing ------------------------------------------------------------------------------------
    def _get_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self.index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        return self._writer

    def add(self, rows: Iterable[tuple[int, Chunk]]) -> None:
        writer = self._get_writer()
        for row_id, chunk in rows:
            doc = tantivy.Document()
            doc.add_unsigned("id", row_id)
            doc.add_text("source", chunk.source)
            doc.add_text("body", " ".join(tokenize(lexical_text(chunk))))
            for tag in chunk.acl or [PUBLIC_TAG]:
                doc.add_text("acl", tag)
            writer.add_document(doc)

    def delete_source(self, source: str) -> None:
        self._get_writer().delete_documents_by_term("source", source)

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()
            self._writer = None
        self.index.reload()

    def rollback(self) -> None:
        if self._writer is not None:
            self._writer.rollback()
            self._writer = None

    def clear(self) -> None:
        self.rollback()
        writer = self._get_writer()
        writer.delete_all_documents()
        self.commit()

    # -- reading ------------------------------------------------------------------------------------
    def num_docs(self) -> int:
        """Documents in the reader's view (callers reload first: `KnowledgeBase.refresh`, an index run)."""
        return self.index.searcher().num_docs

    def doc_freqs(self, terms: list[str]) -> tuple[dict[str, int], int]:
        """(chunks holding each analysed term, all chunks)."""
        searcher = self.index.searcher()
        return {t: searcher.doc_freq("body", t) for t in terms}, searcher.num_docs

    def rarest_term_chunks(self, text: str) -> tuple[int, int]:
        """(chunks holding the text's rarest analyzed term, all chunks): how specific a phrase is."""
        searcher = self.index.searcher()
        terms = list(dict.fromkeys(tokenize(text)))
        if not terms:
            return searcher.num_docs, searcher.num_docs
        return min(searcher.doc_freq("body", t) for t in terms), searcher.num_docs

    def held_terms(self, terms: list[str], access: AccessFilter) -> set[str]:
        """The analysed terms some chunk the caller may read holds."""
        searcher = self.index.searcher()
        held = set()
        for term in terms:
            query = tantivy.Query.term_query(self.schema, "body", term)
            if access.restricted:
                acl = tantivy.Query.term_set_query(self.schema, "acl", access.tags())
                query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, acl)])
            if searcher.search(query, 1).hits:
                held.add(term)
        return held

    def search(self, query: str, k: int, access: AccessFilter) -> list[tuple[int, float]]:
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return []
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", t)) for t in terms]
        text_query = tantivy.Query.boolean_query(should)
        if access.restricted:
            acl_query = tantivy.Query.const_score_query(
                tantivy.Query.term_set_query(self.schema, "acl", access.tags()), 0.0
            )
            text_query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, text_query), (tantivy.Occur.Must, acl_query)]
            )
        searcher = self.index.searcher()
        hits = searcher.search(text_query, k).hits
        return [(searcher.doc(address)["id"][0], float(score)) for score, address in hits if score > 0]

    @staticmethod
    def destroy(folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
