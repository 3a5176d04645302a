"""What exact-first search does to plain BM25 on multi-hop prose: recall@5 on HotpotQA-100, same index, same run.

    python benchmarks/exact_first.py [--dataset ../shared/data/hotpotqa100]

Exact-first puts the passages that contain the query's rare identifiers literally at the top of every mode
(`retrieval/exact.py`). On technical docs that is the point (`max_age`, `LANG-75`); on prose it must not fire
on years or hyphenated words. Rows: exact-first as shipped, switched off, and the earlier rule that also
counted years and plain hyphenated words.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval import exact, searcher

ROOT = Path(__file__).resolve().parents[1]


def _earlier_rule(query: str) -> list[str]:
    found = [next(g for g in m.groups() if g) for m in exact._IDENTIFIER.finditer(query)]
    return list(dict.fromkeys(f.strip() for f in found if f.strip()))[:6]


def recall_at_5(engine: Engine, questions: list[dict]) -> float:
    scores = []
    for q in questions:
        hits = engine.search(q["question"], access=AccessFilter.unrestricted(), kbs=["bench"], mode="bm25", k=20).hits
        docs: list[str] = []
        for hit in hits:
            doc = str(hit.metadata.get("record_id", hit.doc_id.split("#", 1)[-1]))
            if doc not in docs:
                docs.append(doc)
        gold = set(q["gold_doc_ids"])
        scores.append(len(gold & set(docs[:5])) / len(gold))
    return statistics.fmean(scores)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa100")
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.dataset / "qa.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        engine = Engine(Settings(data_folder=Path(folder), llm_provider="none", _env_file=None))
        try:
            engine.index([args.dataset / "corpus.jsonl"], kb="bench")
            shipped = searcher.identifiers
            rows = [("exact-first (shipped)", recall_at_5(engine, questions))]
            searcher.identifiers = lambda query: []
            rows.append(("exact-first off", recall_at_5(engine, questions)))
            searcher.identifiers = _earlier_rule
            rows.append(("earlier rule (years, hyphenated words)", recall_at_5(engine, questions)))
            searcher.identifiers = shipped
        finally:
            engine.close()
    fired = sum(1 for q in questions if exact.identifiers(q["question"]))
    print(f"HotpotQA questions: {len(questions)}; with an identifier under the shipped rule: {fired}")
    print(f"| {'variant':40s} | BM25 recall@5 |")
    print(f"|{'-' * 42}|---------------|")
    for name, value in rows:
        print(f"| {name:40s} | {value:13.3f} |")
    print(f"ratio shipped / off: {rows[0][1] / rows[1][1]:.3f}")


if __name__ == "__main__":
    main()
