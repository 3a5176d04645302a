"""Every answer set over one index, and what changed since a saved run - the before/after of a change in one
command. Scored exactly as `kb-agent eval answers` scores (evaluation.answers.score / summarise).

    python benchmarks/answer_sets/all_sets.py --save /tmp/before          # rows of every set, one index
    python benchmarks/answer_sets/all_sets.py --against /tmp/before       # table, and each question that changed

Backend from the environment as usual (`KB_AGENT_LLM_PROVIDER=none` for the extractive answers). The index is
built once in a throw-away data folder (the embedding cache is the user's: a second run embeds nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT.parent / "shared" / "data" / "fastapi_docs" / "docs"
SETS = sorted((ROOT / "benchmarks" / "answer_sets").glob("fastapi_docs*.jsonl"))
COLUMNS = ("contains_gold", "cites_gold", "cites_gold_text", "refused_ok", "chitchat_ok")


def _verdict(row: dict) -> tuple:
    return (*(row.get(k) for k in COLUMNS), len(row.get("unsupported_kept") or []))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--sets", nargs="*", type=Path, default=SETS)
    parser.add_argument("--save", type=Path, help="folder to write each set's rows to (SET.jsonl)")
    parser.add_argument("--against", type=Path, help="folder of an earlier --save: list the questions that changed")
    args = parser.parse_args()

    from kb_agent.config import Settings
    from kb_agent.evaluation.answers import CitedLines, load_set, score, summarise
    from kb_agent.evaluation.workspace import throwaway_engine

    cited = CitedLines(args.docs)
    print("| set | questions | contains | cites gold | cites text | unanswerable refused | chitchat | unsupported kept "
          "| LLM calls / q | s / q p50 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    changed: list[str] = []
    with throwaway_engine(Settings(), "kb-agent-all-sets-") as engine:
        engine.index([args.docs], kb="eval")
        engine.embed("eval")
        for path in args.sets:
            rows = []
            for item in load_set(path):
                started = time.perf_counter()
                answer = engine.answer_query(item["question"], kbs=["eval"])
                rows.append(score(item, answer, time.perf_counter() - started, cited))
            s = summarise(rows)["all"]
            print(
                f"| {path.stem} | {len(rows)} | {s.get('contains_gold')} | {s.get('cites_gold')} | "
                f"{s.get('cites_gold_text')} | {s.get('unanswerable_refused')} | {s.get('chitchat_ok')} | "
                f"{s.get('unsupported_kept')} | {s.get('llm_calls')} | {s.get('seconds_p50')} |"
            )
            sys.stdout.flush()
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                with open(args.save / f"{path.stem}.jsonl", "w", encoding="utf-8") as out:
                    out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            before_file = args.against / f"{path.stem}.jsonl" if args.against else None
            if before_file and before_file.is_file():
                before = {r["id"]: r for r in map(json.loads, before_file.read_text(encoding="utf-8").splitlines())}
                for row in rows:
                    old = before.get(row["id"])
                    if old is not None and (_verdict(old) != _verdict(row) or old["answer"] != row["answer"]):
                        mark = "verdict" if _verdict(old) != _verdict(row) else "text"
                        changed.append(
                            f"{row['id']} ({mark}) {row['question']}\n"
                            f"  before {_verdict(old)}: {old['answer'][:300]!r}\n"
                            f"  after  {_verdict(row)}: {row['answer'][:300]!r}"
                        )
    if args.against:
        print(f"\n{len(changed)} question(s) changed (verdict = {', '.join(COLUMNS)}, unsupported kept):")
        print("\n".join(changed))


if __name__ == "__main__":
    main()
