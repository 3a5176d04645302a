"""Does the claim check catch a value taken from the neighbouring line? Swapped-value sentences, no model.

    python benchmarks/claim_swaps.py [--docs ../shared/data/fastapi_docs/docs] [--data-folder DIR --kb NAME]

For every answerable question of the FastAPI answer sets (`benchmarks/answer_sets/`), the extractive answer
(no model) gives sentences quoted from the evidence, each cited to its lines. Each such sentence is then
rewritten with one of the values the question does not name (number, code) replaced by a different value of
the same kind that stands on another line of the same evidence item, within 10 lines of the cited ones, and
not on the cited lines: the mistake a small model makes when it reads the item above or below
("`datetime.timedelta` is a `str`", copied from the `datetime.time` item). A swapped sentence is a wrong claim
whose every word is in the evidence. Rows: the claim check as shipped, then with one guard switched off at a
time: the subject binding (values count on any line), the sibling-item premise, one list item per window, the
words around a value held by an extra span; and with all four off (close to the stop-23 check, which also
matched `str` inside "strict"). Originals kept is the control: a check that rejects everything would catch
every swap.

Without --data-folder it indexes --docs into a temporary folder (BM25 only: no embedding, so no download and
a few minutes on two cores); with it, it reuses an index built with `kb-agent index DOCS --kb NAME`.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

from kb_agent.agent import claims
from kb_agent.agent.claim_terms import checkable, is_value, normalise
from kb_agent.agent.claims import ClaimChecker
from kb_agent.agent.sentences import Sentence
from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.evaluation.answers import CitedLines
from kb_agent.tools.base import Evidence

ROOT = Path(__file__).resolve().parents[1]
SETS = ["fastapi_docs", "fastapi_docs_fresh", "fastapi_docs_check"]
NEAR = 10  # the swapped-in value stands this close to the cited lines
_CODE = re.compile(r"`([^`\n]{1,40})`")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.])")


def _evidence(files: CitedLines, item: dict) -> Evidence | None:
    start, end = item["start_line"], item["end_line"]
    text = files.text(f"{item['path']}:L{start}-{end}")
    if text is None:
        return None
    return Evidence(source=item["path"], path=item["path"], start_line=start, end_line=end, text=text)


def _swaps(sentence: str, question: str, cited: tuple[int, int], e: Evidence) -> list[str]:
    """One wrong sentence per value kind: the first value the question does not name (the answer, not the
    subject) replaced by a value of the same kind from a nearby other line."""
    asked = normalise(question)
    lines = e.text.split("\n")
    near = [
        (e.start_line + k, line)
        for k, line in enumerate(lines)
        if not cited[0] <= e.start_line + k <= cited[1] and min(abs(e.start_line + k - n) for n in cited) <= NEAR
    ]
    cited_text = normalise(" ".join(lines[cited[0] - e.start_line : cited[1] - e.start_line + 1]))
    out = []
    for pattern, wrap in ((_CODE, "`{}`"), (_NUMBER, "{}")):
        mine = next((m for m in pattern.finditer(sentence) if normalise(m.group(0)).strip("`") not in asked), None)
        if not mine:
            continue
        for _, line in near:
            other = next(
                (
                    m
                    for m in pattern.findall(line)
                    if normalise(m) not in cited_text and m != mine.group(1 if wrap != "{}" else 0)
                ),
                None,
            )
            if other:
                out.append(sentence[: mine.start()] + wrap.format(other) + sentence[mine.end() :])
                break
    return out


@contextmanager
def _without(*guards: str):
    with ExitStack() as stack:
        if "binding" in guards:
            stack.enter_context(
                mock.patch.object(
                    ClaimChecker, "_about", lambda self, index, subjects: [True] * len(self._lines[index].texts)
                )
            )
        if "sibling" in guards:
            stack.enter_context(mock.patch.object(claims, "sibling_says_more", lambda lines, cited, words: False))
        if "crossing" in guards:
            stack.enter_context(mock.patch.object(claims, "crosses_items", lambda lines, first, last: False))
        if "context" in guards:
            stack.enter_context(
                mock.patch.object(ClaimChecker, "_in_context", lambda self, sentence, values, span: True)
            )
        yield


def collect(engine: Engine, kb: str, docs: Path) -> list[dict]:
    cases = []
    files = CitedLines(docs)  # each file read once
    for name in SETS:
        for line in (ROOT / "benchmarks" / "answer_sets" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if not item.get("answerable") or item["type"] in ("chitchat", "file_discovery"):
                continue
            answer = engine.answer_query(item["question"], kbs=[kb])
            sources = [e for e in (_evidence(files, ev) for ev in answer.evidence) if e is not None]
            for claim in answer.claims:
                if not claim.supported or not claim.citation or ";" in claim.citation:
                    continue
                path, span = claim.citation.rsplit(":L", 1)
                start, end = (int(n) for n in span.split("-"))
                owner = next(
                    (e for e in sources if e.path == path and e.start_line <= start and end <= e.end_line), None
                )
                if owner is None or not any(is_value(i) for i in checkable(claim.sentence)):
                    continue
                for wrong in _swaps(claim.sentence, item["question"], (start, end), owner):
                    cases.append(
                        {
                            "set": name,
                            "question": item["question"],
                            "sources": sources,
                            "right": claim.sentence,
                            "wrong": wrong,
                        }
                    )
    return cases


def rates(cases: list[dict]) -> tuple[float, float]:
    kept = caught = 0
    for case in cases:
        checker = ClaimChecker(case["sources"], case["question"])
        kept += checker.check(Sentence(case["right"], [])).supported
        caught += not checker.check(Sentence(case["wrong"], [])).supported
    return kept / len(cases), caught / len(cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=ROOT.parent / "shared" / "data" / "fastapi_docs" / "docs")
    parser.add_argument("--data-folder", type=Path, help="reuse the index in this kb-agent data folder")
    parser.add_argument("--kb", default="bench")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data_folder or Path(tmp)
        engine = Engine(Settings(data_folder=folder, _env_file=None, llm_provider="none"))
        if args.data_folder is None:
            engine.index([args.docs], kb=args.kb)
        cases = collect(engine, args.kb, args.docs)
        engine.close()
    print(f"{len(cases)} swapped-value sentences from {len({c['question'] for c in cases})} questions")
    print(f"{'claim check':<38} {'originals kept':>15} {'swaps caught':>13}")
    for label, guards in (
        ("as shipped", ()),
        ("without subject binding", ("binding",)),
        ("without sibling-item premise", ("sibling",)),
        ("without one item per window", ("crossing",)),
        ("without words around extra spans", ("context",)),
        ("without all four (stop 23's check)", ("binding", "sibling", "crossing", "context")),
    ):
        with _without(*guards):
            kept, caught = rates(cases)
        print(f"{label:<38} {kept:>15.3f} {caught:>13.3f}")


if __name__ == "__main__":
    main()
