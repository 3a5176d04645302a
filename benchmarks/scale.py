"""Scale benchmark: the embedded store and PostgreSQL + pgvector side by side, through the same store API.

    python benchmarks/scale.py --chunks 100000 [--store embedded,postgres] [--queries 200]

A synthetic corpus (Zipf-distributed words, 384-d vectors clustered around 500 centres) is loaded through
the knowledge-base write API in one index run; 10 % of the chunks carry the caller's group, the rest a
group the caller lacks, so every search runs under an ACL filter that keeps 10 %. Printed per store: bulk
load (chunks/s), BM25 / dense / hybrid latency p50 and p95 (search only; the query vector is given), dense
recall@10 against exact filtered search, BM25 top-10 overlap with an exhaustive search (PostgreSQL prunes
postings per term), the time to delete and re-insert 1,000 chunks, and disk size.
Without KB_AGENT_DATABASE_URL a throw-away embedded PostgreSQL is started in a temp folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.searcher import Searcher
from kb_agent.store.backends import open_knowledge_base
from kb_agent.store.catalog import FileRecord
from kb_agent.store.records import Chunk
from tables import print_markdown_table

MODEL = "bench/synthetic-384"
DIM, CENTRES, PER_FILE = 384, 500, 100
CALLER = AccessFilter.for_groups(["visible"])


def _vocabulary(rng: np.random.Generator, size: int = 20000) -> list[str]:
    consonants, vowels = list("bdfgklmnprstvz"), list("aeiou")
    words: set[str] = set()
    while len(words) < size:
        n = int(rng.integers(2, 5))
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(n)))
    return sorted(words)


class Corpus:
    def __init__(self, n: int, seed: int = 7, share: float = 0.10):
        rng = np.random.default_rng(seed)
        self.vocab = _vocabulary(rng)
        ranks = np.arange(1, len(self.vocab) + 1)
        self.cdf = np.cumsum(1 / ranks) / (1 / ranks).sum()  # Zipf; sampled by inverse CDF (choice(p=) is slow)
        self.centres = rng.normal(size=(CENTRES, DIM)).astype(np.float32)
        self.rng = rng
        self.n = n
        self.visible = rng.random(n) < share  # the caller's share

    def words(self, count: int) -> str:
        picks = np.minimum(np.searchsorted(self.cdf, self.rng.random(count)), len(self.vocab) - 1)
        return " ".join(self.vocab[i] for i in picks)

    def vector(self, centre: int) -> np.ndarray:
        v = self.centres[centre] + 0.6 * self.rng.normal(size=DIM).astype(np.float32)
        return v / np.linalg.norm(v)

    def file(self, index: int) -> tuple[FileRecord, list[Chunk], list[np.ndarray]]:
        source = f"/bench/f{index:06d}.md"
        chunks, vectors = [], []
        for j in range(PER_FILE):
            i = index * PER_FILE + j
            if i >= self.n:
                break
            acl = ["visible"] if self.visible[i] else ["hidden"]
            chunks.append(Chunk(
                kb="bench", doc_id=source, chunk_id=f"{source}::{j}", source=source, path=source[1:],
                start_line=j * 3 + 1, end_line=j * 3 + 3, title=f"Doc {index}", text=self.words(60), acl=acl,
            ))  # fmt: skip
            vectors.append(self.vector(int(self.rng.integers(CENTRES))))
        record = FileRecord(source, "/bench", source[1:], 1, 0.0, f"h{index}", ["visible"], len(chunks), [])
        return record, chunks, vectors


class GivenVectors:
    """The searcher's embedder: the benchmark hands over each query's vector (no model in the timing)."""

    model_id = MODEL

    def __init__(self):
        self.vectors: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_passages(self, texts):  # pragma: no cover - never called: vectors are loaded directly
        raise NotImplementedError


def _load(kb, corpus: Corpus) -> tuple[float, np.ndarray, np.ndarray, list[bool]]:
    files = (corpus.n + PER_FILE - 1) // PER_FILE
    ids_vecs: list[np.ndarray] = []
    allowed: list[bool] = []
    started = time.perf_counter()
    with kb.writing():
        for index in range(files):
            record, chunks, vectors = corpus.file(index)
            kb.replace_file(record, chunks)
            kb.add_vectors({kb.embed_key_for(c): v for c, v in zip(chunks, vectors, strict=True)})
            ids_vecs.extend(vectors)
            allowed.extend(c.acl == ["visible"] for c in chunks)
    kb.sync_vectors()
    seconds = time.perf_counter() - started
    return seconds, np.vstack(ids_vecs), np.array(allowed), allowed


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _disk(kb, settings: Settings) -> float:
    if settings.store == "postgres":
        with kb.db.read() as conn:
            size = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relname LIKE 'kb\\_%' AND c.relkind = 'r' AND n.nspname = 'public'"
            ).fetchone()[0]
        return int(size) / 1e6
    total = sum(p.stat().st_size for p in settings.data_folder.rglob("*") if p.is_file())
    return total / 1e6


def _exact_neighbours(kb, qvecs, vectors, allowed_mask, ids) -> list[set[int]]:
    """Each query's exact top 10 among the rows the caller may see, as row ids (assigned in load order)."""
    visible_rows = np.flatnonzero(allowed_mask)
    if ids is None:  # postgres: row ids follow load order too, from the first id of this knowledge base
        with kb.db.read() as conn:
            first = conn.execute("SELECT min(id) FROM kb_chunks WHERE kb=%s", (kb.name,)).fetchone()[0]
        ids = np.arange(int(first), int(first) + len(vectors))
    return [{int(ids[r]) for r in visible_rows[np.argsort(-(vectors[visible_rows] @ vec))[:10]]} for vec in qvecs]


def _recall(found: list[list[tuple[int, float]]], exact: list[set[int]]) -> float:
    return round(float(np.mean([len(e & {i for i, _ in f}) / 10 for f, e in zip(found, exact, strict=True)])), 3)


def dense_sweep(kb, qvecs, exact: list[set[int]], settings: list[tuple[int, int]]) -> list[dict]:
    """PostgreSQL: dense recall@10 and latency per (hnsw.ef_search, rows fetched before the exact top 10)."""
    rows, default = [], (kb.vectors.ef_search, kb.vectors.fetch)
    for ef, fetch in settings:
        kb.vectors.ef_search, kb.vectors.fetch = ef, fetch
        times, found = [], []
        for vec in qvecs:
            t = time.perf_counter()
            found.append(kb.vectors.search(vec, 10, CALLER))
            times.append((time.perf_counter() - t) * 1000)
        p50, p95 = _percentiles(times)
        rows.append({"ef_search": ef, "fetch": fetch, "dense_p50_ms": round(p50, 1), "dense_p95_ms": round(p95, 1),
                     "dense_recall@10": _recall(found, exact)})  # fmt: skip
        print(rows[-1], flush=True)
    kb.vectors.ef_search, kb.vectors.fetch = default
    return rows


def run_store(
    store: str, n: int, queries: int, url: str | None, workdir: Path, share: float = 0.10,
    sweep: list[tuple[int, int]] | None = None,
) -> dict:  # fmt: skip
    settings = Settings(
        data_folder=workdir / store, store=store, database_url=SecretStr(url) if url else None, _env_file=None,
        rrf_weight_grep=0.0,
    )  # fmt: skip
    kb = open_knowledge_base(f"scale{n}", settings, model_id=MODEL)
    corpus = Corpus(n, share=share)
    seconds, vectors, allowed_mask, _ = _load(kb, corpus)
    kb.refresh()
    embedder = GivenVectors()
    searcher = Searcher([kb], settings, embedder=embedder)
    qrng = np.random.default_rng(11)
    texts, qvecs = [], []
    for i in range(queries):
        text = f"{corpus.words(4)} q{i}"
        vec = corpus.vector(int(qrng.integers(CENTRES)))
        embedder.vectors[text] = vec
        texts.append(text)
        qvecs.append(vec)
    # exact filtered top-10 (by insertion order: kb row ids are assigned in load order)
    ids = np.array(sorted(i for i, _, _ in kb.catalog.embed_keys())) if store == "embedded" else None
    result: dict = {"store": store, "chunks": n, "load_chunks_per_s": round(n / seconds, 1)}
    for mode in ("bm25", "dense", "hybrid"):
        times = []
        for text in texts:
            t = time.perf_counter()
            searcher.search(text, access=CALLER, mode=mode, k=10)
            times.append((time.perf_counter() - t) * 1000)
        p50, p95 = _percentiles(times)
        result[f"{mode}_p50_ms"], result[f"{mode}_p95_ms"] = round(p50, 1), round(p95, 1)
    exact = _exact_neighbours(kb, qvecs, vectors, allowed_mask, ids)
    result["dense_recall@10"] = _recall([kb.vectors.search(vec, 10, CALLER) for vec in qvecs], exact)
    if store == "postgres" and sweep:
        result["sweep"] = dense_sweep(kb, qvecs, exact, sweep)
    if store == "postgres":  # impact-ordered pruning against reading every posting (tantivy is exhaustive)
        overlaps = []
        for text in texts[:50]:
            pruned = {i for i, _ in kb.lexical.search(text, 10, CALLER)}
            exhaustive = {i for i, _ in kb.lexical.search(text, 10, CALLER, depth=None)}
            overlaps.append(len(pruned & exhaustive) / max(1, len(exhaustive)))
        result["bm25_overlap@10"] = round(float(np.mean(overlaps)), 3)
    else:
        result["bm25_overlap@10"] = 1.0
    t = time.perf_counter()
    corpus.rng = np.random.default_rng(5)
    with kb.writing():
        for index in range(10):
            record, chunks, new_vectors = corpus.file(index)
            kb.replace_file(record, chunks)  # delete the file's 100 chunks, insert 100 new ones
            kb.add_vectors({kb.embed_key_for(c): v for c, v in zip(chunks, new_vectors, strict=True)})
    kb.sync_vectors()
    result["reinsert_1000_s"] = round(time.perf_counter() - t, 2)
    result["disk_mb"] = round(_disk(kb, settings), 1)
    if hasattr(kb, "drop"):
        kb.drop()
    kb.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", default="embedded,postgres")
    parser.add_argument("--share", type=float, default=0.10, help="the caller's share of the chunks (ACL filter)")
    parser.add_argument(
        "--dense-sweep", default="", metavar="EFxFETCH,...",
        help="PostgreSQL: dense recall and latency per hnsw.ef_search x rows fetched, e.g. 100x10,200x10,100x40",
    )  # fmt: skip
    args = parser.parse_args()
    sweep = [tuple(int(v) for v in item.split("x")) for item in args.dense_sweep.split(",") if item]
    workdir = Path(tempfile.mkdtemp(prefix="kb-agent-scale-"))
    os.chmod(workdir, 0o711)
    url, started = os.environ.get("KB_AGENT_DATABASE_URL"), None
    rows = []
    try:
        if "postgres" in args.store and not url:
            from kb_agent.store.postgres import embedded

            started = Settings(data_folder=workdir / "pg", _env_file=None)
            url = embedded.start(started)
        for store in args.store.split(","):
            rows.append(run_store(store, args.chunks, args.queries, url, workdir, args.share, sweep))
            print(rows[-1], flush=True)
    finally:
        if started is not None:
            from kb_agent.store.postgres import db, embedded

            db.close_all()
            embedded.stop(started)
        shutil.rmtree(workdir, ignore_errors=True)
    sweeps = [point for row in rows for point in row.pop("sweep", [])]
    print_markdown_table(rows)
    if sweeps:
        print_markdown_table(sweeps)
    print(f"machine: {os.cpu_count()} cores; {subprocess.run(['uname', '-sr'], capture_output=True, text=True).stdout}")


if __name__ == "__main__":
    main()
