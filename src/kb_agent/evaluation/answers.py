"""`kb-agent eval answers`: answer quality on a question set over a folder of documents.

A set is JSONL, one question per line: {id, split, type, question, gold: [{path, start_line, end_line}],
must_contain: [[alternative, ...], ...], answerable}. Paths in `gold` are relative to the indexed folder.
Per question and in total (and per type and split):

- contains gold: every must_contain group has an alternative in the answer (NFKC, case-insensitive);
- citation on gold: a citation of a gold file overlaps a gold line span (file-discovery: cites the file);
- claims: sentences the claim check kept / removed, and - checked again against the files on disk, not the
  evidence the agent saw - kept sentences whose cited lines do not hold their values (numbers, code, quotes);
- citation states the gold: a cited span (read from disk) holds a must_contain alternative - the honest
  second view when a set's gold lists one of several places that state a fact;
- unanswerable refused, chitchat without retrieval or citations;
- LLM calls and seconds.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from kb_agent.agent.claim_terms import holds, normalise, shown
from kb_agent.config import Settings
from kb_agent.evaluation.retrieval import DatasetError
from kb_agent.evaluation.workspace import throwaway_engine
from kb_agent.governance.masking import PLACEHOLDER


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _says(body: str, expected: str) -> bool:
    """The answer states `expected` as a reader sees it: Markdown code and emphasis marks are not text
    ("`g`reater than or `e`qual" reads "greater than or equal")."""
    said, wanted = _norm(body), _norm(expected)
    return wanted in said or wanted in re.sub(r"`|\*\*?", "", said)


def load_set(path: Path, split: str | None = None, limit: int | None = None) -> list[dict]:
    try:
        rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read question set {path}: {exc}") from exc
    for n, row in enumerate(rows, start=1):
        gold = row.get("gold", []) if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str):
            raise DatasetError(f"{path}, line {n}: each line is an object with a `question`")
        if not isinstance(gold, list) or not all(_is_span(g) for g in gold):
            raise DatasetError(f"{path}, question {row.get('id', f'on line {n}')}: `gold` must be a list of "
                               "{path, start_line, end_line}")  # fmt: skip
    if split:
        rows = [r for r in rows if r.get("split") == split]
    return rows[: limit or None]


def _is_span(gold: object) -> bool:
    if not isinstance(gold, dict) or not isinstance(gold.get("path"), str):
        return False
    return all(isinstance(gold.get(k, 1), int) for k in ("start_line", "end_line"))


_CITATION = re.compile(r"^(?P<path>.+?)(?:#page=\d+)?:L(?P<start>\d+)-(?P<end>\d+)$")


class CitedLines:
    """The text of `path:Lx-Ly` citations, read from the indexed folder on disk."""

    def __init__(self, docs: Path):
        self.docs = docs
        self._files: dict[str, list[str] | None] = {}

    def text(self, citation: str) -> str | None:
        match = _CITATION.match(citation.strip())
        if not match:
            return None
        lines = self._lines(match["path"])
        if lines is None:
            return None
        return "\n".join(lines[int(match["start"]) - 1 : int(match["end"])])

    def _lines(self, path: str) -> list[str] | None:
        if path not in self._files:
            self._files[path] = None
            for candidate in (self.docs.parent / path, self.docs / path):
                try:
                    self._files[path] = candidate.read_text(encoding="utf-8", errors="replace").split("\n")
                    break
                except OSError:
                    continue
        return self._files[path]


def unsupported_kept(claims, cited: CitedLines) -> list[str]:
    """Kept sentences whose cited lines on disk do not hold every value (and code name) the sentence states."""
    bad = []
    for claim in claims:
        if not claim.supported:
            continue
        texts = [cited.text(c) for c in (claim.citation or "").split("; ") if c]
        held = _norm(normalise(" ".join(t for t in texts if t)))
        # normalised as the values are ("_llm-test.md" reads "llm-test.md" there)
        paths = [_norm(normalise(c.rsplit(":L", 1)[0])) for c in (claim.citation or "").split("; ")]
        # a value the outbound filter masked ("[SECRET]") is no longer the file's text: nothing to compare
        values = {i for i in shown(claim.sentence) if not any(i in p for p in paths) and not PLACEHOLDER.search(i)}
        if not texts or any(t is None for t in texts) or not all(holds(held, v) for v in values):
            bad.append(claim.sentence)
    return bad


def score(item: dict, answer, seconds: float, cited: CitedLines | None = None) -> dict:
    """One question's row: what the answer got right, by the set's gold."""
    body = answer.answer.split("\n\nReferences:\n", 1)[0]
    kind = item.get("type", "")
    row = {
        "id": item["id"],
        "type": kind,
        "split": item.get("split"),
        "question": item["question"],
        "answer": answer.answer,
        "refused": answer.refused,
        "llm_calls": answer.llm_calls,
        "seconds": round(seconds, 2),
        "route": answer.route.get("complexity"),
        "decided_by": answer.route.get("decided_by"),
        "citations": [f"{c.path}:L{c.start_line}-{c.end_line}" for c in answer.citations],
        "claims_kept": sum(1 for c in answer.claims if c.supported),
        "claims_removed": sum(1 for c in answer.claims if not c.supported),
        "claims": [c.model_dump() for c in answer.claims],
    }
    if kind == "chitchat":
        row["chitchat_ok"] = not answer.citations and not answer.tool_calls and not answer.refused
    elif not item.get("answerable", True):
        row["refused_ok"] = answer.refused
    else:
        groups = item.get("must_contain", [])
        row["contains_gold"] = not answer.refused and all(any(_says(body, a) for a in g) for g in groups)
        row["cites_gold"] = any(
            _cites(c, g, file_only=kind == "file_discovery") for c in answer.citations for g in item.get("gold", [])
        )
        if cited is not None and kind != "file_discovery":
            spans = [_norm(cited.text(f"{c.path}:L{c.start_line}-{c.end_line}") or "") for c in answer.citations]
            row["cites_gold_text"] = not answer.refused and all(
                any(_norm(a) in span for a in g for span in spans) for g in groups
            )
    if cited is not None:
        row["unsupported_kept"] = unsupported_kept(answer.claims, cited)
    return row


def _failed(item: dict) -> dict:
    if item.get("type") == "chitchat":
        return {"chitchat_ok": False}
    if not item.get("answerable", True):
        return {"refused_ok": False}
    return {"contains_gold": False, "cites_gold": False}


def _cites(citation, gold: dict, *, file_only: bool) -> bool:
    if not citation.path.endswith(gold["path"]):
        return False
    return file_only or (citation.start_line <= gold["end_line"] and gold["start_line"] <= citation.end_line)


def summarise(rows: list[dict]) -> dict:
    def rate(key: str, subset: list[dict]) -> float | None:
        values = [r[key] for r in subset if key in r]
        return round(sum(values) / len(values), 3) if values else None

    def block(subset: list[dict]) -> dict:
        return {
            "questions": len(subset),
            "contains_gold": rate("contains_gold", subset),
            "cites_gold": rate("cites_gold", subset),
            "cites_gold_text": rate("cites_gold_text", subset),
            "unanswerable_refused": rate("refused_ok", subset),
            "chitchat_ok": rate("chitchat_ok", subset),
            "errors": sum(1 for r in subset if "error" in r),
            "claims_kept": sum(r["claims_kept"] for r in subset),
            "claims_removed": sum(r["claims_removed"] for r in subset),
            "unsupported_kept": sum(len(r.get("unsupported_kept", [])) for r in subset),
            "llm_calls": round(statistics.mean(r["llm_calls"] for r in subset), 2) if subset else 0,
            "seconds_p50": round(statistics.median(r["seconds"] for r in subset), 2) if subset else 0,
            "seconds_mean": round(statistics.mean(r["seconds"] for r in subset), 2) if subset else 0,
        }

    by_type: dict[str, list[dict]] = defaultdict(list)
    by_split: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_type[r["type"]].append(r)
        by_split[r.get("split") or "all"].append(r)
    return {
        "all": block(rows),
        "by_split": {k: block(v) for k, v in sorted(by_split.items())},
        "by_type": {k: block(v) for k, v in sorted(by_type.items())},
    }


def evaluate_answers(
    docs: Path,
    question_set: Path,
    settings: Settings,
    *,
    split: str | None = None,
    limit: int | None = None,
    out: Path | None = None,
    kb: str = "eval",
    on_progress: Callable[[int, int, str], None] | None = None,
    engine_factory=None,
) -> dict:
    docs = Path(docs)
    if not docs.is_dir():
        raise DatasetError(f"{docs} is not a folder of documents")
    items = load_set(question_set, split, limit)
    rows: list[dict] = []
    cited = CitedLines(docs)
    with throwaway_engine(settings, "kb-agent-eval-answers-", engine_factory) as engine:
        engine.index([docs], kb=kb)
        engine.embed(kb)
        for n, item in enumerate(items, start=1):
            if on_progress:
                on_progress(n, len(items), item["question"])
            started = time.perf_counter()
            try:
                answer = engine.answer_query(item["question"], kbs=[kb])
            except Exception as exc:  # one failing question is a row, not the end of the run
                rows.append(
                    {
                        "id": item["id"],
                        "type": item.get("type", ""),
                        "split": item.get("split"),
                        "question": item["question"],
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                        "seconds": round(time.perf_counter() - started, 2),
                        "llm_calls": 0,
                        "claims_kept": 0,
                        "claims_removed": 0,
                        **_failed(item),
                    }
                )
            else:
                rows.append(score(item, answer, time.perf_counter() - started, cited))
            if out is not None:
                with open(out, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
    return {
        "set": str(question_set),
        "docs": str(docs),
        "split": split or "all",
        "backend": engine.model_name(),
        **summarise(rows),
    }
