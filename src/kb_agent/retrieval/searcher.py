"""One entry point for bm25 / dense / grep / hybrid search over one or more knowledge bases.

Every retriever receives the caller's AccessFilter and applies it inside its own query; hydrated
chunks are checked once more before they leave (defence in depth, never the primary filter).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.llm.embeddings import Embedder
from kb_agent.retrieval.exact import RARE, fetched_identifiers, pattern, reordering_identifiers
from kb_agent.retrieval.fusion import adaptive_weights, rrf
from kb_agent.retrieval.grep import GrepFile, GrepUnavailable, grep_search
from kb_agent.retrieval.hops import linked_hits, merge_hops
from kb_agent.retrieval.release_headings import with_release_heading
from kb_agent.retrieval.translated import RETRIEVER as TRANSLATED
from kb_agent.retrieval.translated import Lexicons, with_translated
from kb_agent.retrieval.types import Mode, SearchHit, SearchResponse
from kb_agent.store.base import FusionWeights, KnowledgeBase
from kb_agent.store.catalog import StoredChunk
from kb_agent.store.live import indexed_lines, read_indexed_bytes
from kb_agent.text.tokenize import has_cjk

log = logging.getLogger("kb_agent.retrieval")
DENSE_MIN_COVERAGE = 0.5  # below it, hybrid leaves the dense side out
MODES: tuple[Mode, ...] = ("hybrid", "bm25", "dense", "grep")


def _hit(kb: str, stored: StoredChunk, score: float) -> SearchHit:
    c = stored.chunk
    return SearchHit.from_chunk(
        c,
        kb=kb,
        score=score,
        chunk_id=c.chunk_id,
        source_type=c.source_type,
        metadata=c.metadata,
    )


_threads: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kb-dense")
    return _threads


@dataclass
class _DenseJob:
    kbs: list[KnowledgeBase]
    query: str
    pool: int
    access: AccessFilter
    coverage: float
    embedder: Embedder | None = None
    weight: float = 1.0
    kb_weight: dict[str, float] = field(default_factory=dict)  # a knowledge base's own multiplier
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def run(self) -> list[tuple[str, float, list[tuple[tuple, float]]]]:
        """Embed the query and search every KB's vectors: one ("dense", weight, (key, score)...) list per KB."""
        assert self.embedder is not None
        t = time.perf_counter()
        vector = self.embedder.embed_query(self.query)
        self.timings["embed_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        lists = [
            (
                "dense",
                self.weight * self.kb_weight.get(kb.name, 1.0),
                [((kb.name, i), s) for i, s in kb.vectors.search(vector, self.pool, self.access)],
            )
            for kb in self.kbs
        ]
        self.timings["dense_ms"] = (time.perf_counter() - t) * 1000
        return lists


class Searcher:
    def __init__(
        self,
        kbs: list[KnowledgeBase],
        settings: Settings,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        *,
        kb_weights: bool = True,
    ):
        """kb_weights=False: the configured fusion weights alone, not each KB's measured ones (what
        `kb-agent eval fusion` compares against)."""
        if not kbs:
            raise ValueError("no knowledge base to search")
        self.kbs = kbs
        self.settings = settings
        self._embedder = embedder
        self._use_kb_weights = kb_weights
        self._lexicons = Lexicons()
        self._max_file_bytes = int(settings.max_file_mb * 1024 * 1024)

    def _get_embedder(self) -> Embedder | None:
        if callable(self._embedder) and not hasattr(self._embedder, "embed_query"):
            self._embedder = self._embedder()
        return self._embedder  # type: ignore[return-value]

    # -- single retrievers: (key, score) best-first; keys are (kb, chunk row id) ------------------
    def _grep(
        self, kb: KnowledgeBase, query: str, n: int, access: AccessFilter, stale: list[str] | None = None
    ) -> list[SearchHit]:
        visible = {f.source: f for f in kb.catalog.visible_files(access)}
        files = [GrepFile(f.source, f.path, f.path) for f in visible.values()]

        def as_indexed(file: GrepFile) -> list[str] | None:
            try:
                return indexed_lines(read_indexed_bytes(visible[file.source], self._max_file_bytes))
            except (OSError, ValueError):  # StaleFile is an OSError: changed since indexed, or unreadable
                if stale is not None:
                    stale.append(file.path)
                return None

        passages = grep_search(
            query,
            files,
            context=self.settings.grep_context_lines,
            k=n,
            timeout_s=self.settings.grep_timeout_s,
            read_lines=as_indexed,
        )
        return [
            SearchHit(
                source=p.file.source,
                path=p.file.path,
                start_line=p.start_line,
                end_line=p.end_line,
                text=p.text,
                score=p.score,
                kb=kb.name,
                doc_id=p.file.doc_id,
                chunk_id=f"{p.file.doc_id}:L{p.start_line}-{p.end_line}",
                source_type="grep",
                acl=visible[p.file.source].acl,
            )
            for p in passages
        ]

    # -- public ------------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        access: AccessFilter,
        mode: Mode = "hybrid",
        k: int = 10,
        pool: int | None = None,
        hops: int = 1,
        beyond: int = 0,
    ) -> SearchResponse:
        """hops=2 adds a second hop with no LLM call (retrieval/hops.py); grep ignores it. `beyond`: also the next
        fused hits after the top k, in fused order (how the top k is chosen does not change: an identifier's
        literal matches are still looked for among the first k*5)."""
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        if hops > 1 and mode != "grep":
            return self._two_hops(query, access=access, mode=mode, k=k, pool=pool, beyond=beyond)
        started = time.perf_counter()
        if pool is None:  # fusion needs a deep pool; a single retriever only what it will return
            cap_slack = 3 if self.settings.max_chunks_per_doc else 1
            pool = self.settings.candidate_pool if mode == "hybrid" else k * cap_slack
        pool = max(pool, k + beyond)
        timings: dict[str, float] = {}
        notices: list[str] = []
        lists: list[tuple[str, float, list[tuple[tuple, float]]]] = []  # (retriever, weight, (key, score)...)
        for kb in self.kbs:
            kb.refresh()
        kb_weights = self._kb_weights() if mode == "hybrid" else {}

        use_bm25 = mode in ("bm25", "hybrid")
        use_dense = mode in ("dense", "hybrid")
        use_grep = mode == "grep" or (mode == "hybrid" and self.settings.rrf_weight_grep > 0)
        by_kb = {kb.name: kb for kb in self.kbs}
        grep_hits: dict[tuple, SearchHit] = {}

        dense_job = self._dense_job(query, pool, access, mode) if use_dense else None
        if dense_job:
            dense_job.kb_weight = {name: w.dense for name, w in kb_weights.items()}
        coverage = dense_job.coverage if dense_job else None
        # the dense side (query embedding + vector search) runs beside the keyword side, not after it
        running = (
            _pool().submit(dense_job.run)
            if dense_job and dense_job.embedder and use_bm25 and not any(kb.writing_now for kb in self.kbs)
            else None
        )
        if use_bm25:
            lists += self._bm25_lists(query, pool, access, timings, {n: w.bm25 for n, w in kb_weights.items()})
            for kb in self.kbs:  # an interrupted or damaged index is said, never silently empty
                if problem := kb.lexical_problem():
                    notices.append(
                        f"keyword search of {kb.name!r} cannot be trusted: {problem}; "
                        f"`kb-agent repair --kb {kb.name}` rebuilds it from the catalog"
                    )
        if dense_job:
            notices += dense_job.notices
            if dense_job.embedder:
                try:
                    dense = running.result() if running else dense_job.run()
                except Exception as exc:  # a broken endpoint or store: keyword results, and say so
                    log.warning("dense search failed: %s", exc)
                    why = f"{type(exc).__name__}: {str(exc)[:200]}"
                    notices.append(f"dense search failed ({why}); the results come from keyword (BM25) search only")
                    if not use_bm25:  # --mode dense: BM25 stands in rather than an empty list
                        lists += self._bm25_lists(query, pool, access, timings)
                else:
                    lists += dense
                    timings.update(dense_job.timings)

        if use_grep:
            t = time.perf_counter()
            stale: list[str] = []
            try:
                for kb in self.kbs:
                    found = []
                    for hit in self._grep(kb, query, pool, access, stale):
                        key = ("grep", kb.name, hit.chunk_id)
                        grep_hits[key] = hit
                        found.append((key, hit.score))
                    lists.append(("grep", self.settings.rrf_weight_grep if mode == "hybrid" else 1.0, found))
            except GrepUnavailable as exc:
                notices.append(str(exc))
            if stale:
                notices.append(
                    f"grep left out {len(stale)} file(s) that changed since they were indexed "
                    f"({', '.join(stale[:3])}); re-index to search them"
                )
            timings["grep_ms"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        ranked = with_translated(self._fuse(lists, single=mode != "hybrid"), lists, k)
        exact = self._rare_identifiers(query) if mode != "grep" else []
        depth = max(k * 5, 30) if exact else k
        fetch = fetched_identifiers(exact, query)
        if fetch:  # the few chunks that hold them join, wherever fusion ranked them
            ranked = self._with_exact_candidates(ranked[:depth], fetch, access, k)
            depth = len(ranked)
        materialized = self._materialize(ranked, by_kb, grep_hits, access, depth + beyond)
        hits = materialized[:depth]
        if exact:  # passages that contain the query's rare identifiers literally come first
            patterns = [pattern(i) for i in exact]
            hits = sorted(hits, key=lambda h: -sum(1 for p in patterns if p.search(h.text)))[:k]
        if beyond:  # the rest in fused order, those the literal matches passed over included
            chosen = {(h.kb, h.chunk_id) for h in hits}
            hits += [h for h in materialized if (h.kb, h.chunk_id) not in chosen][:beyond]
        hits = [with_release_heading(by_kb[h.kb], h, access) if h.kb in by_kb else h for h in hits]
        if has_cjk(query):
            glossary = self._lexicons.glossary(self.kbs, query)
            for hit in hits:  # how the answer step reads an English passage for this Chinese question
                hit.glossary = glossary
                hit.untranslated = hit.kb in by_kb and self._lexicons.untranslated(by_kb[hit.kb], hit.path, hit.text)
        timings["fuse_ms"] = (time.perf_counter() - t) * 1000
        timings["total_ms"] = (time.perf_counter() - started) * 1000
        return SearchResponse(
            query=query, mode=mode, hits=hits, dense_coverage=coverage, timings_ms=timings, notices=notices
        )

    def _dense_job(self, query: str, pool: int, access: AccessFilter, mode: Mode) -> _DenseJob:
        """What the dense side will do, and why not where it cannot (its notices); `run` does the work."""
        total = sum(kb.chunk_count() for kb in self.kbs)
        embedded = sum(len(kb.vectors) for kb in self.kbs)
        job = _DenseJob(self.kbs, query, pool, access, 1.0 if total == 0 else min(1.0, embedded / total))
        embedder = self._get_embedder() if embedded else None
        if embedded == 0:
            job.notices.append("dense search skipped: no chunk is embedded yet (run `kb-agent embed`)")
        elif embedder is None:
            job.notices.append("dense search skipped: no embedder configured")
        elif mode == "hybrid" and job.coverage < DENSE_MIN_COVERAGE:
            # a few embedded chunks would outrank the right page in fusion: keyword results alone
            job.notices.append(
                f"dense vectors cover only {job.coverage:.0%} of chunks: hybrid search uses keyword results until "
                "`kb-agent embed` has filled at least half (--mode dense uses what is embedded)"
            )
        else:
            if job.coverage < 1.0:
                job.notices.append(
                    f"dense vectors cover {job.coverage:.0%} of chunks; results use what is embedded so far"
                )
            job.embedder = embedder
            # in fusion the dense side counts as much as it covers
            job.weight = self.settings.rrf_weight_dense * (job.coverage if mode == "hybrid" else 1.0)
        return job

    def _with_exact_candidates(self, ranked: list, exact: list[str], access: AccessFilter, k: int) -> list:
        """The fused list, then the chunks a keyword search for the identifiers alone finds (at most k per
        knowledge base) that it lacks. A Chinese question about `HTTP 418` ranks Chinese pages first; the one
        English page that holds HTTP_418_IM_A_TEAPOT was below the fused depth and never compared."""
        seen = {key for key, *_ in ranked}
        extra: list[tuple[tuple[str, int], float, dict[str, int], dict[str, float]]] = []
        for kb in self.kbs:
            for i, _ in kb.lexical.search(" ".join(exact), k, access):
                if (kb.name, i) not in seen:
                    seen.add((kb.name, i))
                    extra.append(((kb.name, i), 0.0, {"exact": len(extra) + 1}, {}))
        return ranked + extra

    def _rare_identifiers(self, query: str) -> list[str]:
        """Identifiers of the query that few chunks hold (by the rarest of their analysed terms)."""
        rare = []
        for identifier in reordering_identifiers(query):
            holding = total = 0
            for kb in self.kbs:
                n, chunks = kb.lexical.rarest_term_chunks(identifier)
                holding, total = holding + n, total + chunks
            if total and holding / total <= RARE:
                rare.append(identifier)
        return rare

    def _kb_weights(self) -> dict[str, FusionWeights]:
        """Each knowledge base's measured fusion weights, where `kb-agent eval fusion --save` stored some."""
        if not self._use_kb_weights:
            return {}
        return {kb.name: w for kb in self.kbs if (w := kb.fusion_weights()) is not None}

    def _bm25_lists(
        self,
        query: str,
        pool: int,
        access: AccessFilter,
        timings: dict[str, float],
        kb_weight: dict[str, float] | None = None,
    ) -> list:
        t = time.perf_counter()
        lists = [
            (
                "bm25",
                self.settings.rrf_weight_bm25 * (kb_weight or {}).get(kb.name, 1.0),
                [((kb.name, i), s) for i, s in kb.lexical.search(query, pool, access)],
            )
            for kb in self.kbs
        ]
        if self.settings.rrf_weight_translated > 0 and has_cjk(query):
            weight = self.settings.rrf_weight_translated
            lists += self._lexicons.lists(self.kbs, query, pool, access, weight, kb_weight or {})
        timings["bm25_ms"] = (time.perf_counter() - t) * 1000
        return lists

    def _two_hops(
        self, query: str, *, access: AccessFilter, mode: Mode, k: int, pool: int | None, beyond: int = 0
    ) -> SearchResponse:
        started = time.perf_counter()
        first = self.search(query, access=access, mode=mode, k=k, pool=pool, beyond=beyond)
        top, below = first.hits[:k], first.hits[k:]
        linked = linked_hits(self.kbs, query, top, access, lambda kb, stored: _hit(kb, stored, 0.0))
        for hit in linked:
            hit.scores = {"link": 1.0}
        merged = merge_hops(top, linked, k)
        seen = {(h.kb, h.chunk_id) for h in merged}
        hits = merged + [h for h in below if (h.kb, h.chunk_id) not in seen]
        timings = {**first.timings_ms, "total_ms": (time.perf_counter() - started) * 1000}
        return first.model_copy(update={"hits": hits, "timings_ms": timings})

    def _fuse(self, lists, single: bool) -> list[tuple[tuple, float, dict[str, int], dict[str, float]]]:
        """(key, score, ranks, raw scores) best-first. One list in a single mode keeps its raw scores."""
        raw: dict[tuple, dict[str, float]] = {}
        ranks_of: dict[tuple, dict[str, int]] = {}
        for name, _, found in lists:
            for rank, (key, score) in enumerate(found, start=1):
                raw.setdefault(key, {}).setdefault(name, score)
                ranks_of.setdefault(key, {}).setdefault(name, rank)
        if single and len(lists) == 1:
            name, _, found = lists[0]
            return [(key, score, {name: rank}, raw[key]) for rank, (key, score) in enumerate(found, start=1)]
        # the translated search keeps its configured weight: its scores measure a guessed query, and adaptive
        # fusion read their confidence as the question's, ranking release notes above every Chinese page
        adapted = [entry for entry in lists if entry[0] != TRANSLATED]
        scale = adaptive_weights(adapted) if self.settings.fusion == "adaptive" and not single else {}
        weighted = [
            (name, weight * scale.get(name, 1.0), [key for key, _ in found])
            for name, weight, found in lists
            if weight > 0
        ]
        if single:  # one retriever over several KBs: fuse its lists by rank
            weighted = [(f"{name}{i}", w, keys) for i, (name, w, keys) in enumerate(weighted)]
        fused = rrf(weighted, k=self.settings.rrf_k)
        return [(key, score, ranks_of[key], raw[key]) for key, score, _ in cast(list[tuple[tuple, float, dict]], fused)]

    def _materialize(self, ranked, by_kb, grep_hits, access: AccessFilter, k: int) -> list[SearchHit]:
        """Hydrate only as many fused results as needed; re-check each chunk's ACL (defence in depth)."""
        cap = self.settings.max_chunks_per_doc
        out: list[SearchHit] = []
        per_doc: dict[tuple[str, str], int] = {}
        step = max(k, 10) * (3 if cap else 1)
        for start in range(0, len(ranked), step):
            window = ranked[start : start + step]
            rows: dict[str, dict[int, StoredChunk]] = {}
            for kb_name in {key[0] for key, *_ in window if key[0] != "grep"}:
                ids = [key[1] for key, *_ in window if key[0] == kb_name]
                rows[kb_name] = by_kb[kb_name].catalog.get_chunks(ids)
            for key, score, ranks, raw in window:
                if key[0] == "grep":
                    hit = grep_hits[key].model_copy()
                else:
                    stored = rows[key[0]].get(key[1])
                    if stored is None:  # deleted since the index answered
                        continue
                    hit = _hit(key[0], stored, score)
                if not access.allows(hit.acl):
                    continue
                doc = (hit.kb, hit.doc_id)
                if cap and per_doc.get(doc, 0) >= cap:
                    continue
                per_doc[doc] = per_doc.get(doc, 0) + 1
                hit.score, hit.ranks, hit.scores = score, ranks, raw
                out.append(hit)
                if len(out) >= k:
                    return out
        return out
