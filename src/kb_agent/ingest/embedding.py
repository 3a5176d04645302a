"""The embedding job: embed every chunk whose vector is not cached yet, batch by batch, resumably.

`kb-agent index` runs it in the foreground or in a detached worker (`kb-agent embed`); each batch is
committed to the shared embedding cache, so a stopped job resumes where it was."""

from __future__ import annotations

import time
from collections.abc import Callable

from kb_agent.llm.embeddings import Embedder
from kb_agent.store.base import KBError, KnowledgeBase


def embed_pending(
    kb: KnowledgeBase,
    embedder: Embedder,
    *,
    on_progress: Callable[[int, int, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    sync_every: int = 2000,
) -> dict:
    """Embed the KB's chunks that have no cached vector; returns embedded / pending / seconds / chunks_per_s."""
    if embedder.model_id != kb.model_id:
        raise KBError(f"embedder {embedder.model_id} does not match this KB's cache ({kb.model_id})")
    pending = kb.unembedded()
    missing = list(pending)
    total, done, started = len(missing), 0, time.perf_counter()
    batch_size = kb.settings.embed_batch_size
    since_sync = 0
    for start in range(0, total, batch_size):
        if should_stop and should_stop():
            break
        texts = kb.embedding_texts({key: pending[key] for key in missing[start : start + batch_size]})
        if not texts:
            continue
        vectors = embedder.embed_passages(list(texts.values()))
        kb.add_vectors(dict(zip(texts.keys(), vectors, strict=True)))
        done += len(texts)
        since_sync += len(texts)
        if since_sync >= sync_every:
            kb.sync_vectors()
            since_sync = 0
        if on_progress:
            on_progress(done, total, time.perf_counter() - started)
    kb.sync_vectors()
    elapsed = time.perf_counter() - started
    return {
        "embedded": done,
        "pending": total - done,
        "seconds": elapsed,
        "chunks_per_s": done / elapsed if elapsed > 0 else 0.0,
    }
