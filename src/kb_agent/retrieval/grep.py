"""grep_search: ripgrep over the files a caller may read, ±N-line windows merged into passages,
passages ranked by BM25 against the query."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from kb_agent.text.tokenize import EN_STOPWORDS, QUESTION_WORDS, cut_chinese, has_cjk, tokenize

_WORD_RE = re.compile(r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*|[\u3400-\u9fff]+")
_SKIP_EXT = (".pdf", ".docx", ".xlsx")  # their bytes are not their text
_RECORD_EXT = (".jsonl", ".ndjson", ".csv", ".tsv")  # one record per line: a match is its record, no window
_BATCH = 1000


class GrepUnavailable(RuntimeError):
    pass


@dataclass
class GrepFile:
    source: str
    path: str
    doc_id: str


@dataclass
class Passage:
    file: GrepFile
    start_line: int
    end_line: int
    text: str
    score: float = 0.0


def grep_keywords(query: str, limit: int = 12) -> list[str]:
    """Literal patterns for ripgrep: identifiers and words of 3+ letters, Chinese words of 2+ chars."""
    words: list[str] = []
    for match in _WORD_RE.finditer(query):
        word = match.group(0)
        if has_cjk(word):
            words.extend(w for w in cut_chinese(word) if len(w) >= 2 and w not in QUESTION_WORDS)
        elif len(word) >= 3 and word.lower() not in EN_STOPWORDS and word.lower() not in QUESTION_WORDS:
            words.append(word)
    return list(dict.fromkeys(words))[:limit]


def rg_binary() -> str:
    path = shutil.which("rg")
    if not path:
        raise GrepUnavailable("ripgrep (rg) is not installed: apt-get install ripgrep")
    return path


def _windows(lines: dict[int, str], matches: list[int], context: int) -> list[tuple[int, int]]:
    spans: list[list[int]] = []
    for line in sorted(matches):
        start, end = max(1, line - context), line + context
        if spans and start <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    out = []
    for start, end in spans:  # clip to lines ripgrep returned (file start/end)
        present = [n for n in range(start, end + 1) if n in lines]
        if present:
            out.append((present[0], present[-1]))
    return out


def bm25_rescore(query: str, passages: list[Passage], k1: float = 1.2, b: float = 0.75) -> None:
    terms = set(tokenize(query))
    docs = [Counter(tokenize(p.text)) for p in passages]
    if not docs:
        return
    avg_len = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = Counter(t for d in docs for t in terms if t in d)
    n = len(docs)
    for passage, tf in zip(passages, docs, strict=True):
        length = sum(tf.values())
        score = 0.0
        for term in terms:
            if term in tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * length / avg_len))
        passage.score = score


def grep_search(
    query: str,
    files: list[GrepFile],
    *,
    context: int = 10,
    k: int = 10,
    timeout_s: float = 10.0,
    max_passage_lines: int = 40,
    read_lines: Callable[[GrepFile], list[str] | None] | None = None,
) -> list[Passage]:
    """Search only `files` (already ACL-filtered by the caller); never any other path.

    ripgrep only locates matching lines. With `read_lines`, passage text comes from the lines it returns
    (the file as indexed) and files it returns None for are left out: ripgrep reads whatever the path
    holds now, following symlinks even with --no-follow."""
    keywords = grep_keywords(query)
    files = [f for f in files if not f.source.lower().endswith(_SKIP_EXT)]
    if not keywords or not files:
        return []
    by_source = {f.source: f for f in files}
    args = [
        rg_binary(),
        "--json",
        "--ignore-case",
        "--fixed-strings",
        "--no-ignore",
        "--hidden",
        "--no-follow",
        "--max-count",
        "50",
        "--max-columns",
        "2000",
        "-C",
        str(context),
    ]
    for word in keywords:
        args += ["-e", word]
    lines: dict[str, dict[int, str]] = {}
    matches: dict[str, list[int]] = {}
    sources = list(by_source)
    for start in range(0, len(sources), _BATCH):
        try:
            proc = subprocess.run(
                [*args, "--", *sources[start : start + _BATCH]], capture_output=True, timeout=timeout_s
            )
        except subprocess.TimeoutExpired:
            break  # keep what earlier batches found
        for raw in proc.stdout.splitlines():
            event = json.loads(raw)
            if event.get("type") not in ("match", "context"):
                continue
            data = event["data"]
            source = data["path"].get("text")
            text = data["lines"].get("text")
            if source not in by_source or text is None:
                continue
            number = data["line_number"]
            lines.setdefault(source, {})[number] = text.rstrip("\n").rstrip("\r")
            if event["type"] == "match":
                matches.setdefault(source, []).append(number)
    passages: list[Passage] = []
    for source, found in matches.items():
        file_lines = lines[source]
        if read_lines is not None:
            verified = read_lines(by_source[source])
            if verified is None:
                continue
            file_lines = dict(enumerate(verified, start=1))
            found = [n for n in found if n in file_lines]
        hit_lines = set(found)
        if source.lower().endswith(_RECORD_EXT):
            for number in sorted(hit_lines):
                passages.append(Passage(by_source[source], number, number, file_lines.get(number, "")))
            continue
        for first, last in _windows(file_lines, found, context):
            # a long merged span becomes consecutive pieces; only pieces holding a match are kept
            for piece in range(first, last + 1, max_passage_lines):
                end = min(last, piece + max_passage_lines - 1)
                if any(n in hit_lines for n in range(piece, end + 1)):
                    text = "\n".join(file_lines.get(n, "") for n in range(piece, end + 1))
                    passages.append(Passage(by_source[source], piece, end, text))
    bm25_rescore(query, passages)
    passages.sort(key=lambda p: -p.score)
    return [p for p in passages if p.score > 0][:k]
