"""Dense vectors and the embedding cache in PostgreSQL (pgvector).

The cache (`kb_embeddings`: model, hash of the embedded text -> vector) is shared by every host and
knowledge base, so no text is embedded twice anywhere. `kb_vectors` holds, per chunk and model, the
vector and the chunk's ACL; it is filled from the cache by one SQL statement after each index or
embedding run, and emptied by the chunk's deletion (foreign key). A chunk longer than the embedder's window
also has a tail vector, in a vector space of its own (`<model>_tail`). Searches use a per-space HNSW index
with iterative scans, the ACL condition inside the query."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kb_agent.governance.access import AccessFilter
from kb_agent.store.base import TAIL_MARGIN
from kb_agent.store.postgres.db import Database, acl_condition
from kb_agent.store.postgres.schema import hnsw_index_ddl


class PostgresEmbeddingCache:
    def __init__(self, db: Database, model_key: str):
        self.db = db
        self.model = model_key

    def missing(self, keys: Iterable[str]) -> list[str]:
        keys = list(dict.fromkeys(keys))
        with self.db.read() as conn:
            have = {
                r[0]
                for r in conn.execute(
                    "SELECT key FROM kb_embeddings WHERE model=%s AND key = ANY(%s)", (self.model, keys)
                )
            }
        return [k for k in keys if k not in have]

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT key, embedding FROM kb_embeddings WHERE model=%s AND key = ANY(%s)", (self.model, list(keys))
            ).fetchall()
        return {k: np.asarray(v, dtype=np.float32) for k, v in rows}

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self.db.write() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO kb_embeddings(model, key, embedding) VALUES (%s, %s, %s) "
                "ON CONFLICT (model, key) DO UPDATE SET embedding = excluded.embedding",
                [(self.model, k, np.asarray(v, dtype=np.float32)) for k, v in items.items()],
            )

    def __len__(self) -> int:
        with self.db.read() as conn:
            return conn.execute("SELECT count(*) FROM kb_embeddings WHERE model=%s", (self.model,)).fetchone()[0]

    def integrity_problems(self) -> list[str]:
        return []

    def reset(self) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM kb_embeddings WHERE model=%s", (self.model,))

    def close(self) -> None:
        pass  # the pool belongs to the process


class PostgresVectorIndex:
    def __init__(self, db: Database, kb: str, model_key: str):
        self.db = db
        self.kb = kb
        self.model = model_key
        self.tail_model = f"{model_key}_tail"  # the tails of long chunks: a vector space (and HNSW index) of their own
        self.count = 0  # refreshed by the knowledge base from its meta row (one read per search)
        self.tail_count = 0
        self.dim: int | None = None
        self.ef_search: int | None = None  # None: the connection's setting (KB_AGENT_PG_EF_SEARCH)
        self.fetch = db.dense_fetch  # rows read from the relaxed-order scan before the exact top k is kept

    def __len__(self) -> int:
        return self.count

    def sync(self) -> int:
        """Bring the vectors in step with the chunks whose text is in the cache; returns the count."""
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT vector_dims(embedding) FROM kb_embeddings WHERE model=%s LIMIT 1", (self.model,)
            ).fetchone()
            indexed = self._indexed(conn, self.model)
            conn.execute(
                "INSERT INTO kb_vectors(kb, chunk, model, acl, embedding) "
                "SELECT c.kb, c.id, %(m)s, c.acl, e.embedding FROM kb_chunks c "
                "JOIN kb_embeddings e ON e.model = %(m)s AND e.key = c.embed_key "
                "WHERE c.kb = %(kb)s AND NOT EXISTS "
                "(SELECT 1 FROM kb_vectors v WHERE v.kb = c.kb AND v.model = %(m)s AND v.chunk = c.id)",
                {"m": self.model, "kb": self.kb},
            )
            if row:
                self.dim = int(row[0])
                if not indexed:
                    conn.execute(hnsw_index_ddl(self.model, self.dim))
            self.count = self._store_count(conn, self.model)
        return self.count

    @staticmethod
    def _indexed(conn, space: str) -> bool:
        """Whether a vector space has its HNSW index yet. Its first vectors go in before the index is built:
        one bulk build is many times faster than inserting each row into an existing graph; later rows join
        the index one by one."""
        name = f"kb_vectors_hnsw_{space}"
        return bool(
            conn.execute(
                "SELECT 1 FROM pg_indexes WHERE tablename = 'kb_vectors' AND indexname = %s", (name,)
            ).fetchone()
        )

    def sync_tails(self, tails: dict[int, str]) -> int:
        """Bring the tail vectors in step with `tails` (chunk id -> embedding key of its tail passage): rows for
        chunks no longer listed go, listed chunks whose tail is cached come in with the chunk's ACL."""
        with self.db.write() as conn:
            ids, keys = list(tails), list(tails.values())
            indexed = self._indexed(conn, self.tail_model)
            conn.execute(
                "DELETE FROM kb_vectors WHERE kb = %s AND model = %s AND NOT (chunk = ANY(%s))",
                (self.kb, self.tail_model, ids),
            )
            conn.execute(
                "INSERT INTO kb_vectors(kb, chunk, model, acl, embedding) "
                "SELECT c.kb, c.id, %(t)s, c.acl, e.embedding FROM unnest(%(ids)s::bigint[], %(keys)s::text[]) "
                "AS tail(id, key) JOIN kb_chunks c ON c.kb = %(kb)s AND c.id = tail.id "
                "JOIN kb_embeddings e ON e.model = %(m)s AND e.key = tail.key "
                "WHERE NOT EXISTS "
                "(SELECT 1 FROM kb_vectors v WHERE v.kb = c.kb AND v.model = %(t)s AND v.chunk = c.id)",
                {"t": self.tail_model, "m": self.model, "kb": self.kb, "ids": ids, "keys": keys},
            )
            self.tail_count = self._store_count(conn, self.tail_model)
            if self.tail_count and not indexed and self.dim:  # the heads' dimension: the same embedder
                conn.execute(hnsw_index_ddl(self.tail_model, self.dim))
        return self.tail_count

    def _store_count(self, conn, model: str) -> int:
        count = conn.execute("SELECT count(*) FROM kb_vectors WHERE kb=%s AND model=%s", (self.kb, model)).fetchone()[0]
        conn.execute(
            "INSERT INTO kb_meta(kb, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (kb, key) DO UPDATE SET value = excluded.value",
            (self.kb, f"vectors:{model}", str(count)),
        )
        return int(count)

    def search(self, query: np.ndarray, k: int, access: AccessFilter) -> list[tuple[int, float]]:
        """The best k chunks, each scored by the better of its head and its tail vector (less TAIL_MARGIN)."""
        if not self.count:
            return []
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        best: dict[int, float] = {}
        with self.db.read(access) as conn:
            if self.ef_search:
                conn.execute(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}")
            for model in [self.model] + ([self.tail_model] if self.tail_count else []):
                margin = TAIL_MARGIN if model == self.tail_model else 0.0
                for chunk, score in self._nearest(conn, model, query, k, access):
                    score -= margin
                    if score > best.get(chunk, -np.inf):
                        best[chunk] = score
        # iterative scans may return neighbours slightly out of order: keep the exact best k
        return sorted(best.items(), key=lambda r: -r[1])[:k]

    def _nearest(self, conn, model: str, query: np.ndarray, k: int, access: AccessFilter) -> list[tuple[int, float]]:
        # the model key is our own hex digest: inlined so the planner matches the partial HNSW index
        column = f"embedding::vector({len(query)})"
        acl, acl_params = acl_condition(access)  # first guard; row-level security is the second
        sql = (
            f"SELECT chunk, -({column} <#> %s) FROM kb_vectors WHERE model = '{model}' AND kb = %s{acl} "
            f"ORDER BY {column} <#> %s LIMIT %s"
        )
        rows = conn.execute(sql, (query, self.kb, *acl_params, query, max(k, self.fetch))).fetchall()
        return [(int(c), float(s)) for c, s in rows]
