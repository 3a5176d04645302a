"""One entry point for bm25 / dense / grep / hybrid search over one or more knowledge bases.

Every retriever receives the caller's AccessFilter and applies it inside its own query; hydrated
chunks are checked once more before they leave (defence in depth, never the primary filter).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kb_agent.config import Settings
from kb_agent.llm.embeddings import Embedder
from kb_agent.retrieval.fusion import cap_per_document, rrf
from kb_agent.retrieval.grep import GrepFile, GrepUnavailable, grep_search
from kb_agent.retrieval.types import Mode, SearchHit, SearchResponse
from kb_agent.store.access import AccessFilter
from kb_agent.store.catalog import StoredChunk
from kb_agent.store.kb import KnowledgeBase

MODES: tuple[Mode, ...] = ("hybrid", "bm25", "dense", "grep")


def _hit(kb: str, stored: StoredChunk, score: float) -> SearchHit:
    c = stored.chunk
    return SearchHit(
        source=c.source, path=c.path, start_line=c.start_line, end_line=c.end_line, text=c.text, score=score,
        kb=kb, doc_id=c.doc_id, chunk_id=c.chunk_id, title=c.title, heading_path=c.heading_path, page=c.page,
        source_type=c.source_type, metadata=c.metadata, acl=c.acl,
    )


class Searcher:
    def __init__(
        self, kbs: list[KnowledgeBase], settings: Settings, embedder: Embedder | Callable[[], Embedder] | None = None
    ):
        if not kbs:
            raise ValueError("no knowledge base to search")
        self.kbs = kbs
        self.settings = settings
        self._embedder = embedder

    def _get_embedder(self) -> Embedder | None:
        if callable(self._embedder) and not hasattr(self._embedder, "embed_query"):
            self._embedder = self._embedder()
        return self._embedder  # type: ignore[return-value]

    # -- single retrievers ---------------------------------------------------------------------------
    def _bm25(self, kb: KnowledgeBase, query: str, n: int, access: AccessFilter) -> list[SearchHit]:
        found = kb.lexical.search(query, n, access)
        chunks = kb.catalog.get_chunks(i for i, _ in found)
        return [_hit(kb.name, chunks[i], s) for i, s in found if i in chunks]

    def _dense(self, kb: KnowledgeBase, vector, n: int, access: AccessFilter) -> list[SearchHit]:
        found = kb.vectors.search(vector, n, access)
        chunks = kb.catalog.get_chunks(i for i, _ in found)
        return [_hit(kb.name, chunks[i], s) for i, s in found if i in chunks]

    def _grep(self, kb: KnowledgeBase, query: str, n: int, access: AccessFilter) -> list[SearchHit]:
        visible = {f.source: f for f in kb.catalog.visible_files(access)}
        files = [GrepFile(f.source, f.path, f.path) for f in visible.values()]
        passages = grep_search(
            query, files, context=self.settings.grep_context_lines, k=n, timeout_s=self.settings.grep_timeout_s
        )
        return [
            SearchHit(
                source=p.file.source, path=p.file.path, start_line=p.start_line, end_line=p.end_line,
                text=p.text, score=p.score, kb=kb.name, doc_id=p.file.doc_id,
                chunk_id=f"{p.file.doc_id}:L{p.start_line}-{p.end_line}", source_type="grep",
                acl=visible[p.file.source].acl,
            )
            for p in passages
        ]

    # -- public ------------------------------------------------------------------------------------
    def search(
        self, query: str, *, access: AccessFilter, mode: Mode = "hybrid", k: int = 10, pool: int | None = None
    ) -> SearchResponse:
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        started = time.perf_counter()
        pool = max(pool or self.settings.candidate_pool, k)
        timings: dict[str, float] = {}
        notices: list[str] = []
        lists: list[tuple[str, float, list[SearchHit]]] = []
        for kb in self.kbs:
            kb.refresh()

        use_bm25 = mode in ("bm25", "hybrid")
        use_dense = mode in ("dense", "hybrid")
        use_grep = mode == "grep" or (mode == "hybrid" and self.settings.rrf_weight_grep > 0)

        if use_bm25:
            t = time.perf_counter()
            for kb in self.kbs:
                lists.append(("bm25", self.settings.rrf_weight_bm25, self._bm25(kb, query, pool, access)))
            timings["bm25_ms"] = (time.perf_counter() - t) * 1000

        coverage = None
        if use_dense:
            total = sum(kb.catalog.count_chunks() for kb in self.kbs)
            embedded = sum(len(kb.vectors.ids()) for kb in self.kbs)
            coverage = 1.0 if total == 0 else min(1.0, embedded / total)
            if embedded == 0:
                notices.append("dense search skipped: no chunk is embedded yet (run `kb-agent embed`)")
            else:
                if coverage < 1.0:
                    notices.append(
                        f"dense vectors cover {coverage:.0%} of chunks; results use what is embedded so far"
                    )
                t = time.perf_counter()
                embedder = self._get_embedder()
                if embedder is None:
                    notices.append("dense search skipped: no embedder configured")
                else:
                    vector = embedder.embed_query(query)
                    timings["embed_ms"] = (time.perf_counter() - t) * 1000
                    t = time.perf_counter()
                    for kb in self.kbs:
                        lists.append(("dense", self.settings.rrf_weight_dense, self._dense(kb, vector, pool, access)))
                    timings["dense_ms"] = (time.perf_counter() - t) * 1000

        if use_grep:
            t = time.perf_counter()
            try:
                for kb in self.kbs:
                    lists.append(("grep", self.settings.rrf_weight_grep, self._grep(kb, query, pool, access)))
            except GrepUnavailable as exc:
                notices.append(str(exc))
            timings["grep_ms"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        hits = self._fuse(lists, single=mode != "hybrid")
        hits = [h for h in hits if access.allows(h.acl)]
        hits = cap_per_document(hits, lambda h: (h.kb, h.doc_id), self.settings.max_chunks_per_doc)[:k]
        timings["fuse_ms"] = (time.perf_counter() - t) * 1000
        timings["total_ms"] = (time.perf_counter() - started) * 1000
        return SearchResponse(
            query=query, mode=mode, hits=hits, dense_coverage=coverage, timings_ms=timings, notices=notices
        )

    def _fuse(self, lists: list[tuple[str, float, list[SearchHit]]], single: bool) -> list[SearchHit]:
        by_key: dict[tuple[str, str], SearchHit] = {}
        ranked = []
        for name, weight, hits in lists:
            keys = []
            for rank, hit in enumerate(hits, start=1):
                key = (hit.kb, hit.chunk_id)
                keys.append(key)
                merged = by_key.setdefault(key, hit)
                merged.scores.setdefault(name, hit.score)
                merged.ranks.setdefault(name, rank)
            ranked.append((name, weight if weight > 0 else 0.0, keys))
        if single and len(lists) == 1:
            return [by_key[key] for key in ranked[0][2]]
        fused = rrf([r for r in ranked if r[1] > 0], k=self.settings.rrf_k)
        out = []
        for key, score, _ranks in fused:
            hit = by_key[key]
            hit.score = score
            out.append(hit)
        return out
