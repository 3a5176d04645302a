"""`eval agent` you can look at: per-question rows, R@2, aliases, per hop count, a static HTML report,
"contains" that a refusal never satisfies, and no temp folder left behind on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import HashEmbedder, write
from kb_agent.evaluation.agent import contains_answer, evaluate_agent


def test_contains_counts_whole_words_and_never_a_refusal():
    assert contains_answer("The office opens at nine.", ["nine"], refused=False)
    assert not contains_answer("I could not find it in the knowledge base.", ["no"], refused=False)  # "not" ≠ "no"
    assert not contains_answer("No.", ["no"], refused=True)
    assert contains_answer("It is called the Big Apple.", ["New York City", "Big Apple"], refused=False)


@pytest.fixture
def tiny_set(tmp_path):
    root = tmp_path / "set"
    docs = [
        {"_id": "d1", "title": "Alpha", "text": "Alpha is a city founded by Beta."},
        {"_id": "d2", "title": "Beta", "text": "Beta was a sailor born in Gamma."},
        {"_id": "d3", "title": "Noise", "text": "Unrelated text about cheese."},
    ]
    write(root / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    qa = [
        {"id": "q1", "question": "Where was the founder of Alpha born?", "answer": "Gamma",
         "gold_doc_ids": ["d1", "d2"]},
        {"id": "q2", "question": "Who founded Alpha?", "answer": "Beta", "answer_aliases": ["the sailor"],
         "gold_doc_ids": ["d1"], "hops": 1},
    ]  # fmt: skip
    write(root / "qa.jsonl", "".join(json.dumps(q) + "\n" for q in qa))
    return root


def test_rows_report_and_per_hop_figures(settings, tiny_set, tmp_path):
    from kb_agent.engine import Engine

    out, report = tmp_path / "rows.jsonl", tmp_path / "report.html"
    result = evaluate_agent(
        tiny_set,
        settings.model_copy(update={"llm_provider": "none"}),
        engine_factory=lambda s: Engine(s, embedder=HashEmbedder()),
        out=out,
        report=report,
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2"] and rows[1]["gold"] == ["Beta", "the sailor"]
    assert {"recall2", "recall5", "hops", "steps", "llm_calls", "seconds", "contains"} <= set(rows[0])
    assert set(result["by_hops"]) == {"1", "2"} and "evidence_recall@2" in result
    page = report.read_text()
    assert page.count("<svg") == 4 and "recall@5" in page and "Where was the founder of Alpha born?" in page


@pytest.mark.slow  # a real subprocess (CI runs it)
def test_sigterm_removes_the_throwaway_folder(settings, tmp_path):
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from kb_agent.config import Settings
        from kb_agent.evaluation.workspace import throwaway_engine
        settings = Settings(data_folder={str(tmp_path / "data")!r}, _env_file=None, llm_provider="none")
        with throwaway_engine(settings, "kb-agent-sigterm-test-") as engine:
            print(engine.settings.data_folder, flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    folder = proc.stdout.readline().strip()
    assert folder.startswith(tempfile.gettempdir()) and os.path.isdir(folder)
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    assert not os.path.exists(folder)


def test_eval_retrieval_writes_rows_with_recall_at_2(tmp_path, settings, embedder):
    from kb_agent.evaluation.retrieval import evaluate_retrieval
    from test_eval import _dataset

    _dataset(tmp_path / "ds")
    out = tmp_path / "rows.jsonl"
    result = evaluate_retrieval(tmp_path / "ds", settings, embedder=embedder, modes=("bm25", "hybrid"), out=out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["mode"] for r in rows} == {"bm25", "hybrid"} and len(rows) == 2 * result["queries"]
    assert {"recall@2", "recall@5", "gold", "top10"} <= set(rows[0]) and "recall@2" in result["bm25"]
