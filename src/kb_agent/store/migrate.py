"""Move a knowledge base from the embedded store to PostgreSQL without embedding anything again.

Files, roots and chunks are copied as they are (line spans, ACLs, metadata); keyword weights are computed
by the target; the vectors of every chunk come along through the shared embedding cache. The copy is one
transaction on the target: an interrupted migration leaves the target as it was."""

from __future__ import annotations

import time
from pathlib import Path

from kb_agent.store.embedding_cache import EmbeddingCache
from kb_agent.store.kb import EmbeddedKnowledgeBase
from kb_agent.store.postgres.kb import PostgresKnowledgeBase


def migrate_to_postgres(source: EmbeddedKnowledgeBase, target: PostgresKnowledgeBase, *, replace: bool = False) -> dict:
    """Copy `source` into `target`; refuses a non-empty target unless `replace`."""
    started = time.perf_counter()
    if target.catalog.count_files() and not replace:
        raise ValueError(
            f"knowledge base {target.name!r} already holds files in PostgreSQL; pass --replace to overwrite it"
        )
    files = {f.source: f for f in source.catalog.all_files()}
    by_source: dict[str, list] = {}
    for stored in source.catalog.iter_chunks():
        by_source.setdefault(stored.chunk.source, []).append(stored.chunk)
    vectors = 0
    with target.writing():
        for root in target.roots():
            target.remove_root(root)
        for existing in target.catalog.all_files():  # files no remaining root holds
            target.delete_file(existing.source)
        for root, acl in source.roots().items():
            target.set_root(root, acl)
        for record in files.values():
            target.replace_file(record, by_source.get(record.source, []))
        keys = [key for _, key, _ in source.catalog.embed_keys()]
        for start in range(0, len(keys), 5000):
            found = source.cache.get_many(keys[start : start + 5000])
            if found:
                target.cache.put_many(found)
                vectors += len(found)
    graph = source.graph()
    if graph.generation == source.catalog.generation:  # in step with the files moved: the same edges
        target.graph().copy_from(graph, target.catalog.generation)
    return {
        "kb": source.name,
        "files": len(files),
        "chunks": sum(len(c) for c in by_source.values()),
        "vectors": len(target.vectors),
        "vectors_copied": vectors,
        "seconds": round(time.perf_counter() - started, 2),
    }


def import_cached_vectors(target: PostgresKnowledgeBase, cache_folder: Path) -> int:
    """Copy from this host's embedding cache every vector the target still lacks; how many came."""
    local = EmbeddingCache(cache_folder / "embeddings", target.model_id)
    try:
        keys = list(target.unembedded())
        found = 0
        for start in range(0, len(keys), 5000):
            vectors = local.get_many(keys[start : start + 5000])
            if vectors:
                target.add_vectors(vectors)
                found += len(vectors)
    finally:
        local.close()
    if found:
        target.sync_vectors()
    return found
