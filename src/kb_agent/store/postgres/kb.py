"""One knowledge base in PostgreSQL + pgvector: the same contract as the embedded one (`store/base.py`).

An index run is one database transaction: catalog, keyword weights, term statistics and vectors change
together or not at all (a crash mid-run leaves the previous state). Writers of one knowledge base are
serialised by an advisory lock, across processes and hosts. Readers see committed state only, so every
server worker answers from the same rows.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from pgvector import SparseVector

from kb_agent.config import Settings
from kb_agent.llm.embeddings import embedder_model_id
from kb_agent.store.base import EmbedProgress, KBBusy, SharedParts, model_key, validate_kb_name
from kb_agent.store.catalog import FileRecord
from kb_agent.store.graph import KnowledgeGraph
from kb_agent.store.postgres.catalog import PostgresCatalog
from kb_agent.store.postgres.db import Database, database_for
from kb_agent.store.postgres.graph import PostgresGraph
from kb_agent.store.postgres.lexical import DIMENSIONS, PostgresKeywordIndex, analyse, doc_weights
from kb_agent.store.postgres.vectors import PostgresEmbeddingCache, PostgresVectorIndex
from kb_agent.store.records import Chunk

_ANALYZE_AFTER = 5_000  # chunks written in one run after which the tables' statistics are refreshed
_FLUSH_EVERY = 20_000  # chunks held before they are weighted and copied in (the first batch sets avgdl)
_COPY_COLS = (
    "kb, chunk_id, doc_id, source, path, start_line, end_line, page, title, heading_path, content_hash, acl, "
    "updated_at, source_type, text, metadata, embed_key, doc_len, terms, bm25"
)


def _clean(text: str) -> str:
    return text.replace("\x00", "")  # PostgreSQL text cannot hold NUL


@dataclass
class _Pending:
    chunk: Chunk
    key: str
    tf: Counter[int]
    length: int


class PostgresKnowledgeBase(SharedParts):
    def __init__(self, name: str, settings: Settings, *, model_id: str | None = None, db: Database | None = None):
        self.name = validate_kb_name(name)
        self.settings = settings
        self.folder = settings.kbs_folder / name  # local: the embedding worker's pid and log
        self.db = db or database_for(settings)
        self.model_id = model_id or embedder_model_id(settings)
        self.model_key = model_key(self.model_id)
        self.catalog = PostgresCatalog(self.db, name)
        self.lexical = PostgresKeywordIndex(self.db, name)
        self.vectors = PostgresVectorIndex(self.db, name, self.model_key)
        self.cache = PostgresEmbeddingCache(self.db, self.model_key)
        self._pending: list[_Pending] = []
        self._written = 0  # chunks copied in by this run
        self._writing = False
        self._graph: KnowledgeGraph | None = None
        self._meta: dict[str, str] = {}
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO kb_meta(kb, key, value) VALUES (%s, 'created', %s) ON CONFLICT DO NOTHING",
                (name, str(time.time())),
            )
        self.refresh()

    @staticmethod
    def exists(name: str, settings: Settings) -> bool:
        with database_for(settings).read() as conn:
            return bool(conn.execute("SELECT 1 FROM kb_meta WHERE kb=%s AND key='created'", (name,)).fetchone())

    @staticmethod
    def list_names(settings: Settings) -> list[str]:
        with database_for(settings).read() as conn:
            return [r[0] for r in conn.execute("SELECT kb FROM kb_meta WHERE key='created' ORDER BY kb")]

    def drop(self) -> None:
        """Delete the knowledge base and everything it holds (the shared embedding cache stays)."""
        with self.db.write() as conn:
            for table in ("kb_vectors", "kb_chunks", "kb_files", "kb_roots", "kb_terms", "kb_graph", "kb_meta"):
                conn.execute(f"DELETE FROM {table} WHERE kb=%s", (self.name,))

    def close(self) -> None:
        pass  # the connection pool belongs to the process (db.close_all)

    def _new_graph(self) -> KnowledgeGraph:
        return PostgresGraph(self.db, self.name, self.folder)

    def refresh(self) -> None:
        """Read the KB's counters once per search (chunks, vectors of this model, generation)."""
        self._meta = self.catalog.meta()
        self.vectors.count = int(self._meta.get(f"vectors:{self.model_key}", "0"))
        self.vectors.tail_count = int(self._meta.get(f"vectors:{self.vectors.tail_model}", "0"))

    def chunk_count(self) -> int:
        return int(self._meta.get("lex_docs", "0"))

    def lexical_problem(self) -> str | None:
        return None  # keyword weights commit in the same transaction as the chunks

    # -- the write API ------------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        with self.db.write() as conn:
            locked = conn.execute(
                "SELECT pg_try_advisory_xact_lock(hashtext('kb_agent.write'), hashtext(%s))", (self.name,)
            ).fetchone()[0]
            if not locked:
                raise KBBusy(f"another process is writing to knowledge base {self.name!r}")
            self._writing = True
            try:
                yield
                self._flush()
                self.catalog.bump_generation()
            finally:
                self._writing = False
                self._pending.clear()
        self.sync_vectors()
        if self._written >= _ANALYZE_AFTER:
            self.db.vacuum_analyze("kb_chunks, kb_impacts, kb_vectors, kb_terms")
        self._written = 0

    def replace_file(self, record: FileRecord, chunks: list[Chunk]) -> tuple[int, int]:
        self._must_be_writing()
        removed = self._delete_chunks(record.source)
        self.catalog.insert_file(record, len(chunks), time.time())
        for chunk in chunks:
            tf, length = analyse(chunk)
            self._pending.append(_Pending(chunk, self.embed_key_for(chunk), tf, length))
        if len(self._pending) >= _FLUSH_EVERY:
            self._flush()
        return removed, len(chunks)

    def delete_file(self, source: str) -> int:
        self._must_be_writing()
        removed = self._delete_chunks(source)
        self.catalog.delete_file_row(source)
        return removed

    def _delete_chunks(self, source: str) -> int:
        """Remove a file's chunks with their term statistics (vectors follow by foreign key)."""
        held = len(self._pending)
        self._pending = [p for p in self._pending if p.chunk.source != source]
        with self.db.write() as conn:
            count, length = conn.execute(
                "WITH gone AS (DELETE FROM kb_chunks WHERE kb=%(kb)s AND source=%(s)s RETURNING terms, doc_len), "
                "dec AS (SELECT t, count(*) AS c FROM gone, unnest(terms) AS t GROUP BY t), "
                "upd AS (UPDATE kb_terms k SET df = k.df - dec.c FROM dec WHERE k.kb=%(kb)s AND k.term=dec.t) "
                "SELECT count(*), coalesce(sum(doc_len), 0) FROM gone",
                {"kb": self.name, "s": source},
            ).fetchone()
        if count:
            self.catalog.add_meta("lex_docs", -count)
            self.catalog.add_meta("lex_len", -int(length))
        return int(count) + held - len(self._pending)

    def _flush(self) -> None:
        """Weight the held chunks by the KB's average length (including them) and copy them in."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        self._written += len(batch)
        batch_len = sum(p.length for p in batch)
        docs = int(self.catalog.get_meta("lex_docs") or "0") + len(batch)
        avgdl = (int(self.catalog.get_meta("lex_len") or "0") + batch_len) / docs
        df: Counter[int] = Counter()
        with self.db.write() as conn, conn.cursor() as cur:
            # COPY cannot write a table under row-level security: copy into a private staging table
            cur.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS kb_chunks_in ON COMMIT DROP AS SELECT {_COPY_COLS}, "
                "NULL::real[] AS weights FROM kb_chunks WITH NO DATA"
            )
            with cur.copy(f"COPY kb_chunks_in ({_COPY_COLS}, weights) FROM STDIN") as copy:
                for p in batch:
                    c = p.chunk
                    df.update(p.tf.keys())
                    weights = doc_weights(p.tf, p.length, avgdl)
                    copy.write_row((
                        self.name, c.chunk_id, c.doc_id, c.source, c.path, c.start_line, c.end_line, c.page,
                        _clean(c.title), json.dumps(c.heading_path, ensure_ascii=False), c.content_hash, list(c.acl),
                        c.updated_at, c.source_type, _clean(c.text),
                        _clean(json.dumps(c.metadata, ensure_ascii=False, default=str)), p.key, p.length,
                        list(weights), SparseVector(weights, DIMENSIONS), list(weights.values()),
                    ))  # fmt: skip
            # the chunks, then one impact row per (term, chunk) for the keyword index
            cur.execute(
                f"WITH added AS (INSERT INTO kb_chunks ({_COPY_COLS}) SELECT {_COPY_COLS} FROM kb_chunks_in "
                "RETURNING kb, id, chunk_id, acl) INSERT INTO kb_impacts (kb, term, chunk, weight, acl) "
                "SELECT a.kb, u.term, a.id, u.weight, a.acl FROM added a JOIN kb_chunks_in s USING (chunk_id), "
                "unnest(s.terms, s.weights) AS u(term, weight)"
            )
            cur.execute("TRUNCATE kb_chunks_in")
            terms, counts = zip(*df.items(), strict=True) if df else ((), ())
            cur.execute(
                "INSERT INTO kb_terms(kb, term, df) SELECT %s, t, c FROM unnest(%s::int[], %s::int[]) AS u(t, c) "
                "ON CONFLICT (kb, term) DO UPDATE SET df = kb_terms.df + excluded.df",
                (self.name, list(terms), list(counts)),
            )
        self.catalog.add_meta("lex_docs", len(batch))
        self.catalog.add_meta("lex_len", batch_len)

    def repair_stores(self) -> list[str]:
        """Re-weight every chunk by today's average length, recount term statistics, refill the vectors."""
        self._must_be_writing()
        rows = list(self.catalog.iter_chunks())
        with self.db.write() as conn:
            conn.execute("DELETE FROM kb_chunks WHERE kb=%s", (self.name,))
            conn.execute("DELETE FROM kb_terms WHERE kb=%s", (self.name,))
            conn.execute("DELETE FROM kb_meta WHERE kb=%s AND key IN ('lex_docs', 'lex_len')", (self.name,))
        for stored in rows:
            tf, length = analyse(stored.chunk)
            self._pending.append(_Pending(stored.chunk, stored.embed_key, tf, length))
        self._flush()
        return [
            "catalog: PostgreSQL checks its own pages (use amcheck for a deep check)",
            f"keyword weights and term statistics recomputed ({len(rows)} chunks)",
            "dense vectors refilled from the shared embedding cache after the run",
            "knowledge graph: re-extracted after the run",
        ]

    # -- embedding ----------------------------------------------------------------------------------
    def sync_vectors(self, force: bool = False, *, save: bool = True) -> None:
        self.vectors.sync()
        self.vectors.sync_tails(self.tail_keys())
        self.refresh()

    def embed_progress(self) -> EmbedProgress:
        with self.db.read() as conn:
            total, embedded = conn.execute(
                "SELECT count(*), count(e.key) FROM kb_chunks c LEFT JOIN kb_embeddings e "
                "ON e.model = %s AND e.key = c.embed_key WHERE c.kb = %s",
                (self.model_key, self.name),
            ).fetchone()
        return EmbedProgress(total=int(total), embedded=int(embedded))

    def unembedded(self) -> dict[str, int]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT c.embed_key, min(c.id) AS first FROM kb_chunks c WHERE c.kb = %s AND NOT EXISTS "
                "(SELECT 1 FROM kb_embeddings e WHERE e.model = %s AND e.key = c.embed_key) "
                "GROUP BY c.embed_key ORDER BY first",
                (self.name, self.model_key),
            ).fetchall()
        return self._then_tails({key: int(first) for key, first in rows})

    def add_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        self.cache.put_many(vectors)
