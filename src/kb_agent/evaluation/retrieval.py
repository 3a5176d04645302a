"""`kb-agent eval retrieval`: BEIR-layout datasets scored for bm25, dense and hybrid search.

The corpus goes into a throw-away knowledge base; the embedding cache is the real one, so a second
run of the same dataset embeds nothing.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import SecretStr

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.ingest.embedding import embed_pending
from kb_agent.ingest.indexer import Indexer
from kb_agent.llm.embeddings import Embedder, get_embedder
from kb_agent.retrieval.searcher import Searcher
from kb_agent.retrieval.types import Mode
from kb_agent.store.backends import open_knowledge_base


class DatasetError(ValueError):
    pass


@dataclass
class Dataset:
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(folder: Path, split: str = "test") -> Dataset:
    folder = Path(folder)
    corpus = folder / "corpus.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for needed in (corpus, qrels_path):
        if not needed.is_file():
            raise DatasetError(f"{needed} not found (BEIR layout: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)")
    qrels: dict[str, dict[str, int]] = {}
    for line_no, line in enumerate(qrels_path.read_text().splitlines(), start=1):
        parts = line.split("\t")
        if len(parts) < 3 or (line_no == 1 and not parts[2].strip().lstrip("-").isdigit()):
            continue  # header or blank
        if int(parts[2]) > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries: dict[str, str] = {}
    for name in (f"queries_{split}.jsonl", "queries.jsonl"):
        path = folder / name
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    if str(record["_id"]) in qrels:
                        queries[str(record["_id"])] = record["text"]
            break
    if not queries:
        raise DatasetError(f"no queries in {folder} match qrels/{split}.tsv")
    return Dataset(corpus=corpus, queries=queries, qrels={q: r for q, r in qrels.items() if q in queries})


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(rels)) / len(rels) if rels else 0.0


def mrr_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    return next((1.0 / (i + 1) for i, d in enumerate(ranked[:k]) if d in rels), 0.0)


@dataclass
class ModeScores:
    ndcg10: list[float] = field(default_factory=list)
    recall2: list[float] = field(default_factory=list)
    recall5: list[float] = field(default_factory=list)
    recall10: list[float] = field(default_factory=list)
    recall100: list[float] = field(default_factory=list)
    mrr10: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], rels: dict[str, int], latency_ms: float) -> None:
        self.ndcg10.append(ndcg_at(ranked, rels, 10))
        self.recall2.append(recall_at(ranked, rels, 2))
        self.recall5.append(recall_at(ranked, rels, 5))
        self.recall10.append(recall_at(ranked, rels, 10))
        self.recall100.append(recall_at(ranked, rels, 100))
        self.mrr10.append(mrr_at(ranked, rels, 10))
        self.latency_ms.append(latency_ms)

    def summary(self) -> dict:
        lat = sorted(self.latency_ms)
        return {
            "ndcg@10": round(statistics.fmean(self.ndcg10), 4),
            "recall@2": round(statistics.fmean(self.recall2), 4),
            "recall@5": round(statistics.fmean(self.recall5), 4),
            "recall@10": round(statistics.fmean(self.recall10), 4),
            "recall@100": round(statistics.fmean(self.recall100), 4),
            "mrr@10": round(statistics.fmean(self.mrr10), 4),
            "p50_ms": round(lat[len(lat) // 2], 2),
            "p95_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.95))], 2),
        }


class QueryMemo:
    """Embeds each query once across modes and records how long query embedding takes."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.model_id = inner.model_id
        self.times_ms: list[float] = []
        self._cached = lru_cache(maxsize=None)(self._embed)

    def _embed(self, text: str) -> np.ndarray:
        started = time.perf_counter()
        vector = self.inner.embed_query(text)
        self.times_ms.append((time.perf_counter() - started) * 1000)
        return vector

    def embed_query(self, text: str) -> np.ndarray:
        return self._cached(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)


def _write_row(out: Path, qid: str, mode: str, ranked: list[str], rels: dict[str, int], latency: float) -> None:
    row = {
        "query_id": qid,
        "mode": mode,
        "ndcg@10": round(ndcg_at(ranked, rels, 10), 4),
        **{f"recall@{k}": round(recall_at(ranked, rels, k), 4) for k in (2, 5, 10)},
        "gold": sorted(d for d, r in rels.items() if r > 0),
        "top10": ranked[:10],
        "latency_ms": round(latency, 2),
    }
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def evaluate_retrieval(
    dataset_dir: Path,
    settings: Settings,
    *,
    split: str = "test",
    modes: tuple[str, ...] = ("bm25", "dense", "hybrid"),
    limit: int | None = None,
    depth: int = 100,
    embed: bool = True,
    on_stage: Callable[[str], None] | None = None,
    on_embed: Callable[[int, int, float], None] | None = None,
    embedder: Embedder | None = None,
    out: Path | None = None,
    fusion: bool = False,
) -> dict:
    """`out`: one JSON row per query and mode (query id, mode, nDCG@10, R@2/5/10, the first ten documents);
    `fusion`: also hybrid at each BM25 / dense weight pair (`evaluation/fusion_tuning.py`), under "fusion"."""
    data = load_beir(dataset_dir, split)
    query_ids = sorted(data.queries)[: limit or None]
    workdir = Path(tempfile.mkdtemp(prefix="kb-agent-eval-"))
    eval_settings = settings.model_copy(update={"data_folder": workdir})
    name = "eval"
    if settings.store == "postgres":  # a throw-away knowledge base in the configured database, dropped below
        from kb_agent.store.postgres.db import database_url

        name = f"eval-{uuid.uuid4().hex[:12]}"
        eval_settings = eval_settings.model_copy(update={"database_url": SecretStr(database_url(settings))})
    model_id = embedder.model_id if embedder is not None else None
    kb = open_knowledge_base(name, eval_settings, cache_folder=settings.cache_folder, model_id=model_id)
    try:
        if on_stage:
            on_stage(f"indexing {data.corpus}")
        report = Indexer(kb).run([data.corpus])
        result: dict = {
            "dataset": str(dataset_dir),
            "split": split,
            "queries": len(query_ids),
            "indexing": {
                "chunks": report.chunks_added,
                "seconds": round(report.seconds, 2),
                "chunks_per_s": round(report.chunks_per_s, 1),
            },
        }
        memo = None
        if any(m in modes for m in ("dense", "hybrid", "hybrid2")):
            memo = QueryMemo(embedder or get_embedder(settings))
            if embed:
                if settings.store == "postgres":  # vectors this host already computed are not computed again
                    from kb_agent.store.migrate import import_cached_vectors

                    import_cached_vectors(kb, settings.cache_folder)  # type: ignore[arg-type]
                if on_stage:
                    on_stage("embedding chunks not in the cache yet")
                stats = embed_pending(kb, memo, on_progress=on_embed)
                result["embedding"] = {"model": kb.model_id, **{k: round(v, 2) for k, v in stats.items()}}
            result["dense_coverage"] = round(kb.embed_progress().coverage, 4)
            # queries embedded before the timed searches: hybrid embeds beside its keyword search, so subtracting
            # the embedding time afterwards would under-state its latency
            for qid in query_ids:
                memo.embed_query(data.queries[qid])
        searcher = Searcher([kb], eval_settings, embedder=memo)
        access = AccessFilter.unrestricted()
        for mode in modes:
            if on_stage:
                on_stage(f"searching: {mode}")
            scores = ModeScores()
            base: Mode = "hybrid" if mode == "hybrid2" else mode  # type: ignore[assignment]  # checked by the CLI
            hops = 2 if mode == "hybrid2" else 1  # hybrid2: hybrid with the second hop
            for qid in query_ids:
                response = searcher.search(
                    data.queries[qid], access=access, mode=base, k=depth * 3, pool=depth * 3, hops=hops
                )
                ranked: list[str] = []
                for hit in response.hits:
                    doc = str(hit.metadata.get("record_id", hit.doc_id))
                    if doc not in ranked:
                        ranked.append(doc)
                latency = response.timings_ms["total_ms"] - response.timings_ms.get("embed_ms", 0.0)
                scores.add(ranked[:depth], data.qrels[qid], latency)
                if out is not None:
                    _write_row(out, qid, mode, ranked, data.qrels[qid], latency)
            result[mode] = scores.summary()
        if fusion:
            if on_stage:
                on_stage("searching: hybrid at each fusion weight pair")
            result["fusion"] = _fusion_grid(kb, eval_settings, memo, data, query_ids)
        if memo is not None and memo.times_ms:
            lat = sorted(memo.times_ms)
            result["query_embedding_ms"] = {
                "p50": round(lat[len(lat) // 2], 2),
                "p95": round(lat[int(len(lat) * 0.95)], 2),
            }
        return result
    finally:
        if hasattr(kb, "drop"):
            kb.drop()
        kb.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _fusion_grid(kb, settings: Settings, memo: Embedder | None, data: Dataset, query_ids: list[str]) -> dict:
    from kb_agent.evaluation.fusion_tuning import choose, doc_scorer, grid_search, measure_grid

    search = grid_search([kb], settings, memo, AccessFilter.unrestricted(), k=30)
    questions = [(data.queries[q], doc_scorer(data.qrels[q])) for q in query_ids]
    return choose(measure_grid(questions, search)).as_dict()
