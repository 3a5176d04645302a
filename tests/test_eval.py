import json

import pytest

from kb_agent.evaluation.retrieval import DatasetError, evaluate_retrieval, load_beir, mrr_at, ndcg_at, recall_at


def test_metrics():
    rels = {"a": 1, "b": 1}
    assert ndcg_at(["a", "b", "c"], rels, 10) == pytest.approx(1.0)
    assert ndcg_at(["c", "a"], rels, 10) == pytest.approx((1 / 1.5849625) / (1 + 1 / 1.5849625))
    assert recall_at(["a", "x", "y"], rels, 2) == 0.5
    assert mrr_at(["x", "y", "b"], rels, 10) == pytest.approx(1 / 3)
    assert mrr_at(["x"], rels, 10) == 0.0


def _dataset(folder):
    docs = [
        ("d1", "Walrus", "Walruses live in the Arctic and eat clams."),
        ("d2", "Python", "Python is a programming language with dynamic typing."),
        ("d3", "Rust", "Rust offers memory safety without garbage collection."),
        ("d4", "Tea", "Green tea is brewed at lower temperatures than black tea."),
    ]
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in docs))
    queries = [("q1", "what do walruses eat"), ("q2", "memory safety garbage collection"), ("q3", "brewing tea")]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps({"_id": q, "text": t}) for q, t in queries))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td4\t1\n")


def test_evaluate_retrieval_end_to_end(tmp_path, settings, embedder):
    _dataset(tmp_path / "ds")
    result = evaluate_retrieval(tmp_path / "ds", settings, embedder=embedder)
    assert result["queries"] == 3 and result["indexing"]["chunks"] == 4
    for mode in ("bm25", "dense", "hybrid"):
        assert result[mode]["ndcg@10"] == pytest.approx(1.0), mode
        assert {"recall@5", "recall@10", "recall@100", "mrr@10", "p50_ms", "p95_ms"} <= set(result[mode])
    assert result["dense_coverage"] == 1.0


def test_bad_dataset_folder(tmp_path):
    with pytest.raises(DatasetError, match=r"corpus\.jsonl"):
        load_beir(tmp_path)
