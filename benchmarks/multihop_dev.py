"""Build the multi-hop tuning set that sits beside HotpotQA-100: the same questions over the same paragraphs,
with every paragraph's title removed (MuSiQue-style: the next hop's entity is not a title the previous
paragraph names, so title links cannot do the bridge's work; the bridge must be read out of the text).

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


def build(source: Path, out: Path) -> int:
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
            if line.strip():
                item = json.loads(line)
                item["hops"] = 2
                qa.write(json.dumps(item, ensure_ascii=False) + "\n")
    # the queries and qrels unchanged, so `kb-agent eval retrieval` runs on the set too
    shutil.copyfile(source / "queries.jsonl", out / "queries.jsonl")
    shutil.copytree(source / "qrels", out / "qrels", dirs_exist_ok=True)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(f"{build(args.source, args.out)} paragraphs without titles -> {args.out}")


if __name__ == "__main__":
    main()
