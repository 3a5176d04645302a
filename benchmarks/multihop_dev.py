"""Build the multi-hop tuning set that sits beside HotpotQA-100: the same questions over the same paragraphs,
with every paragraph's title removed (MuSiQue-style: the next hop's entity is not a title the previous
paragraph names, so title links cannot do the bridge's work; the bridge must be read out of the text).
Beside the 100 2-hop questions: 13 3-hop and 2 4-hop questions written for this set over chains of the
same paragraphs (`multihop_sets/hotpot_chains.jsonl`: our questions, the paragraphs' ids only), where each
hop's answer is only in the next paragraph, and 12 2-hop questions worded MuSiQue-style, the bridge hidden
in a relation or a clause ("Where is the publisher of The Orange Eats Creeps based?",
`multihop_sets/hotpot_hidden.jsonl`, ids `mh2-*`). `--no-chains` leaves both out.
`--only multihop_sets/hotpot_distractors.jsonl` builds a set of those questions alone: 27 held-out questions
(stop 52, ids `md*`) over the distractor paragraphs no other question's gold uses, written and committed
before their first run. `--only multihop_sets/hotpot_paraphrased.jsonl`: 27 more (stop 53, ids `mp*`, 22 2-hop and
5 3-hop) over fresh pairs of linked paragraphs, each question paraphrased away from the paragraph that holds its
answer (on average a third of its content words are that paragraph's; two share none), also committed before
their first run. `--only multihop_sets/hotpot_bridges.jsonl`: 27 more (stop 54, ids `mq*`, 24 2-hop and 3 3-hop)
whose bridge is never a paragraph's title but a person, place or work two paragraphs both mention in their
text (MuSiQue-style), over paragraphs no earlier set uses, committed before their first run.

    python benchmarks/multihop_dev.py --out /tmp/hotpot_untitled
    kb-agent eval agent --dataset /tmp/hotpot_untitled
    kb-agent eval retrieval --dataset /tmp/hotpot_untitled

Reads ../shared/data/hotpotqa100 (CC BY-SA 4.0); writes corpus.jsonl, qa.jsonl, queries.jsonl and qrels/
to --out (not committed).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "shared" / "data" / "hotpotqa100"
SETS = Path(__file__).resolve().parent / "multihop_sets"
OWN_SETS = (SETS / "hotpot_chains.jsonl", SETS / "hotpot_hidden.jsonl")  # our questions over its paragraphs


def build(source: Path, out: Path, own_sets: tuple[Path, ...] = OWN_SETS, with_hotpot: bool = True) -> int:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for line in (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                record["title"] = ""
                corpus.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
    with open(out / "qa.jsonl", "w", encoding="utf-8") as qa:
        for line in (source / "qa.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip() and with_hotpot:
                item = json.loads(line)
                item["hops"] = 2
                qa.write(json.dumps(item, ensure_ascii=False) + "\n")
    # the queries and qrels as they are, so `kb-agent eval retrieval` runs on the set too
    if with_hotpot:
        shutil.copyfile(source / "queries.jsonl", out / "queries.jsonl")
        shutil.copytree(source / "qrels", out / "qrels", dirs_exist_ok=True)
    else:
        (out / "queries.jsonl").write_text("", encoding="utf-8")
        (out / "qrels").mkdir(exist_ok=True)
        (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    for own in own_sets:
        _add_questions(own, out)
    return count


def _add_questions(own: Path, out: Path) -> None:
    """Our own questions appended to qa.jsonl, queries.jsonl and qrels/test.tsv."""
    items = [json.loads(line) for line in own.read_text(encoding="utf-8").splitlines() if line.strip()]
    with (
        open(out / "qa.jsonl", "a", encoding="utf-8") as qa,
        open(out / "queries.jsonl", "a", encoding="utf-8") as queries,
    ):
        for item in items:
            qa.write(json.dumps(item, ensure_ascii=False) + "\n")
            queries.write(json.dumps({"_id": item["id"], "text": item["question"]}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "a", encoding="utf-8") as qrels:
        for item in items:
            qrels.writelines(f"{item['id']}\t{doc}\t1\n" for doc in item["gold_doc_ids"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--no-chains", action="store_true", help="only the 100 HotpotQA questions")
    parser.add_argument("--only", type=Path, help="only this file's questions")
    args = parser.parse_args()
    if args.only:
        count = build(args.source, args.out, (args.only,), with_hotpot=False)
    else:
        count = build(args.source, args.out, () if args.no_chains else OWN_SETS)
    print(f"{count} paragraphs without titles -> {args.out}")


if __name__ == "__main__":
    main()
