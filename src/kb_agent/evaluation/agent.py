"""`kb-agent eval agent`: the whole agent on a multi-hop QA set (HotpotQA layout: corpus.jsonl + qa.jsonl).

Evidence recall@2/@5 (gold paragraphs among the first two / five distinct documents of the final
evidence), all gold @5, answer EM/F1 (HotpotQA normalisation) and "contains the gold answer" (whole words,
any alias; a refusal contains nothing), citation precision (citations that point at a gold paragraph),
steps, LLM calls and seconds - overall, per route and per hop count - and single-shot BM25 recall@5 from
the same index as the baseline. `out` writes one JSON row per question; `report` draws the plots
(evaluation/report.py).
"""

from __future__ import annotations

import json
import re
import statistics
import string
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kb_agent.config import Settings
from kb_agent.evaluation.retrieval import DatasetError
from kb_agent.evaluation.workspace import throwaway_engine
from kb_agent.governance.access import AccessFilter


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1_score(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def contains_answer(body: str, answers: list[str], refused: bool) -> bool:
    """The normalised gold answer (or an alias) as whole words of the answer; a refusal never counts
    ("no" is not found inside "I could not find it")."""
    if refused:
        return False
    text = f" {normalize_answer(body)} "
    return any(f" {gold} " in text for gold in (normalize_answer(a) for a in answers) if gold)


def answer_body(answer: str) -> str:
    """The answer without its References footer and [n] markers."""
    body = answer.split("\n\nReferences:\n", 1)[0]
    return re.sub(r"\[\d+\]", "", body).strip()


def _record(doc_id: str) -> str:
    return doc_id.split("#", 1)[1] if "#" in doc_id else doc_id


def evaluate_agent(
    dataset_dir: Path,
    settings: Settings,
    *,
    limit: int | None = None,
    on_progress: Callable[[int, int, str], None] | None = None,
    engine_factory=None,
    out: Path | None = None,
    report: Path | None = None,
) -> dict:

    dataset_dir = Path(dataset_dir)
    corpus, qa_path = dataset_dir / "corpus.jsonl", dataset_dir / "qa.jsonl"
    for needed in (corpus, qa_path):
        if not needed.is_file():
            raise DatasetError(f"{needed} not found (expects corpus.jsonl and qa.jsonl)")
    questions = [json.loads(line) for line in qa_path.read_text().splitlines() if line.strip()][: limit or None]
    with throwaway_engine(settings, "kb-agent-eval-agent-", engine_factory) as engine:
        engine.index([corpus], kb="eval")
        engine.embed("eval")
        rows = []
        for index, item in enumerate(questions, start=1):
            if on_progress:
                on_progress(index, len(questions), item["question"])
            gold = set(item.get("gold_doc_ids") or [])
            started = time.perf_counter()
            answer = engine.answer_query(item["question"], kbs=["eval"])
            seconds = time.perf_counter() - started
            docs: list[str] = []
            for evidence in answer.evidence:
                doc = _record(evidence["doc_id"])
                if doc not in docs:
                    docs.append(doc)
            cited = []
            for citation in answer.citations:
                match = next(
                    (
                        e
                        for e in answer.evidence
                        if e["path"] == citation.path  # the cited lines' passage
                        and e["start_line"] <= citation.start_line <= e["end_line"]
                    ),
                    None,
                )
                if match:
                    cited.append(_record(match["doc_id"]))
            baseline = engine.search(
                item["question"], access=AccessFilter.unrestricted(), kbs=["eval"], mode="bm25", k=20
            ).hits
            base_docs: list[str] = []
            for hit in baseline:
                doc = str(hit.metadata.get("record_id", _record(hit.doc_id)))
                if doc not in base_docs:
                    base_docs.append(doc)
            body = answer_body(answer.answer)
            answers = [item["answer"], *(item.get("answer_aliases") or item.get("aliases") or [])]
            rows.append(
                {
                    "id": item.get("id", str(index)),
                    "question": item["question"],
                    "answer": body,
                    "gold": answers,
                    "hops": int(item.get("hops") or len(gold) or 1),
                    "recall2": len(gold & set(docs[:2])) / len(gold) if gold else 0.0,
                    "recall5": len(gold & set(docs[:5])) / len(gold) if gold else 0.0,
                    "both5": float(gold <= set(docs[:5])) if gold else 0.0,
                    "bm25_recall5": len(gold & set(base_docs[:5])) / len(gold) if gold else 0.0,
                    "em": float(normalize_answer(body) == normalize_answer(item["answer"])),
                    "contains": float(contains_answer(body, answers, answer.refused)),
                    "f1": f1_score(body, item["answer"]),
                    "citation_precision": (sum(c in gold for c in cited) / len(cited)) if cited else None,
                    "refused": answer.refused,
                    "llm_calls": answer.llm_calls,
                    "steps": answer.iterations,
                    "planned_queries": len(answer.planned_queries),
                    "search_steps": len(answer.steps),
                    "step_trace": answer.steps,
                    "seconds": seconds,
                    "complexity": answer.route.get("complexity"),
                }
            )
            if out is not None:
                with open(out, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
    precisions = [r["citation_precision"] for r in rows if r["citation_precision"] is not None]
    by_route = {
        str(c): _group([r for r in rows if r["complexity"] == c])
        for c in sorted({r["complexity"] for r in rows}, key=str)
    }
    by_hops = {str(h): _group([r for r in rows if r["hops"] == h]) for h in sorted({r["hops"] for r in rows})}
    llm = engine.llms().main
    result = {
        "dataset": str(dataset_dir),
        "questions": len(rows),
        "llm": llm.model if llm is not None else "none (extractive)",
        "evidence_recall@2": _mean(rows, "recall2", 4),
        "evidence_recall@5": _mean(rows, "recall5", 4),
        "both_gold@5": _mean(rows, "both5", 4),
        "baseline_bm25_recall@5": _mean(rows, "bm25_recall5", 4),
        "answer_em": _mean(rows, "em", 4),
        "answer_f1": _mean(rows, "f1", 4),
        "answer_contains_gold": _mean(rows, "contains", 4),
        "citation_precision": round(statistics.fmean(precisions), 4) if precisions else None,
        "refusal_rate": _mean(rows, "refused", 4),
        "llm_calls_per_question": _mean(rows, "llm_calls", 2),
        "seconds_per_question": _mean(rows, "seconds", 2),
        "steps_per_question": _mean(rows, "steps", 2),
        "search_steps_per_question": _mean(rows, "search_steps", 2),
        "by_route": by_route,
        "by_hops": by_hops,
    }
    if report is not None:
        from kb_agent.evaluation.report import write_report

        write_report(report, result, rows)
    return result


def _mean(rows: list[dict], key: str, digits: int) -> float:
    return round(statistics.fmean(float(r[key]) for r in rows), digits)


def _group(group: list[dict]) -> dict:
    return {
        "questions": len(group),
        "recall@5": _mean(group, "recall5", 4),
        "all_gold@5": _mean(group, "both5", 4),
        "contains": _mean(group, "contains", 4),
        "llm_calls": _mean(group, "llm_calls", 2),
        "steps": _mean(group, "steps", 2),
        "seconds": _mean(group, "seconds", 2),
    }
