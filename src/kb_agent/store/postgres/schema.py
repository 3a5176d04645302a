"""Tables of the PostgreSQL backend. Every table carries the knowledge base: the column to partition by
(or to distribute by, with Citus: `CITUS_DDL`).

Row-level security is the second guard on chunks and vectors: a session sees restricted rows only after
it declares the caller's groups (`kb_agent.groups`) or an unrestricted scope (`kb_agent.scope=all`) for
its transaction. The first guard is the ACL condition inside every search query."""

from __future__ import annotations

SCHEMA_VERSION = "4"

DDL = """
CREATE TABLE IF NOT EXISTS kb_meta (
    kb text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (kb, key)
);
CREATE TABLE IF NOT EXISTS kb_roots (
    kb text NOT NULL, root text NOT NULL, acl text[] NOT NULL, added_at double precision,
    PRIMARY KEY (kb, root)
);
CREATE TABLE IF NOT EXISTS kb_files (
    kb text NOT NULL, source text NOT NULL, root text NOT NULL, path text NOT NULL, size bigint,
    mtime double precision, file_hash text, acl text[] NOT NULL, n_chunks integer,
    inherited_acl text[] NOT NULL, real_path text NOT NULL DEFAULT '', acl_sources jsonb NOT NULL DEFAULT '[]',
    indexed_at double precision, PRIMARY KEY (kb, source)
);
CREATE INDEX IF NOT EXISTS kb_files_path ON kb_files (kb, path);
CREATE TABLE IF NOT EXISTS kb_chunks (
    id bigserial, kb text NOT NULL, chunk_id text NOT NULL, doc_id text NOT NULL, source text NOT NULL,
    path text NOT NULL, start_line integer NOT NULL, end_line integer NOT NULL, page integer, title text,
    heading_path jsonb NOT NULL DEFAULT '[]', content_hash text, acl text[] NOT NULL,
    updated_at double precision, source_type text, text text NOT NULL, metadata jsonb NOT NULL DEFAULT '{}',
    embed_key text NOT NULL, doc_len integer NOT NULL, terms integer[] NOT NULL, bm25 sparsevec NOT NULL,
    PRIMARY KEY (kb, id), UNIQUE (kb, chunk_id)
);
CREATE INDEX IF NOT EXISTS kb_chunks_source ON kb_chunks (kb, source);
CREATE INDEX IF NOT EXISTS kb_chunks_doc ON kb_chunks (kb, doc_id);
-- keyword search's inverted index, one row per (term, chunk) with the term's BM25 weight in the chunk: term ids,
-- weights and ACL only (nothing readable), so no row-level security and its index scans may filter by the ACL.
-- The covering index gives a term's heaviest visible postings first (impact order), so a search reads at most
-- a fixed number per term instead of every chunk holding a common word.
CREATE TABLE IF NOT EXISTS kb_impacts (
    kb text NOT NULL, term integer NOT NULL, chunk bigint NOT NULL, weight real NOT NULL, acl text[] NOT NULL,
    FOREIGN KEY (kb, chunk) REFERENCES kb_chunks (kb, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS kb_impacts_top ON kb_impacts (kb, term, weight DESC) INCLUDE (chunk, acl);
CREATE INDEX IF NOT EXISTS kb_impacts_chunk ON kb_impacts (kb, chunk);
-- the knowledge graph's edges (with the text and ACL of the lines that assert them) as one JSON document;
-- readable by store-internal transactions only (see RLS): the graph's reader filters every edge by ACL
CREATE TABLE IF NOT EXISTS kb_graph (
    kb text NOT NULL PRIMARY KEY, data text NOT NULL, version bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS kb_terms (
    kb text NOT NULL, term integer NOT NULL, df integer NOT NULL, PRIMARY KEY (kb, term)
);
CREATE TABLE IF NOT EXISTS kb_embeddings (
    model text NOT NULL, key text NOT NULL, embedding vector NOT NULL, PRIMARY KEY (model, key)
);
CREATE TABLE IF NOT EXISTS kb_vectors (
    kb text NOT NULL, chunk bigint NOT NULL, model text NOT NULL, acl text[] NOT NULL,
    embedding vector NOT NULL, PRIMARY KEY (kb, model, chunk),
    FOREIGN KEY (kb, chunk) REFERENCES kb_chunks (kb, id) ON DELETE CASCADE
);
"""

# Row-level security: restricted rows only for a transaction that declared who is asking.
_INTERNAL = "current_setting('kb_agent.scope', true) = 'all'"
_VISIBLE = (
    "current_setting('kb_agent.scope', true) = 'all' OR acl = '{}' "
    "OR acl && coalesce(nullif(current_setting('kb_agent.groups', true), ''), '{}')::text[]"
)
RLS = (
    "".join(
        f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS {table}_read ON {table};
CREATE POLICY {table}_read ON {table} FOR SELECT USING ({_VISIBLE});
DROP POLICY IF EXISTS {table}_write ON {table};
CREATE POLICY {table}_write ON {table} FOR ALL USING (current_setting('kb_agent.scope', true) = 'all')
    WITH CHECK (true);
"""
        for table in ("kb_chunks", "kb_vectors")
    )
    + f"""
ALTER TABLE kb_graph ENABLE ROW LEVEL SECURITY;
ALTER TABLE kb_graph FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS kb_graph_internal ON kb_graph;
CREATE POLICY kb_graph_internal ON kb_graph FOR ALL USING ({_INTERNAL}) WITH CHECK ({_INTERNAL});
"""
)

# Citus: every table is distributed by kb (the embedding cache is a reference table), so one knowledge base's
# rows and its joins stay on one worker. Citus does not install on this machine kind: a test checks the live
# schema against what Citus demands (every key and foreign key holds `kb`, every table listed here).
CITUS_DDL = """
SELECT create_distributed_table('kb_meta', 'kb');
SELECT create_distributed_table('kb_roots', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_files', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_chunks', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_terms', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_graph', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_impacts', 'kb', colocate_with => 'kb_meta');
SELECT create_distributed_table('kb_vectors', 'kb', colocate_with => 'kb_meta');
SELECT create_reference_table('kb_embeddings');
"""


def hnsw_index_ddl(model_key: str, dim: int) -> str:
    """One HNSW index per embedding model (a partial index: its dimension is fixed, models differ)."""
    return (
        f"CREATE INDEX IF NOT EXISTS kb_vectors_hnsw_{model_key} ON kb_vectors "
        f"USING hnsw ((embedding::vector({dim})) vector_ip_ops) WHERE model = '{model_key}'"
    )
