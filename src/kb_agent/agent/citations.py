"""Turn a model's [n] markers into checked, renumbered citations with a References footer."""

from __future__ import annotations

import re

from kb_agent.tools.base import Evidence

_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,，]\s*\d{1,3})*)\]")
_FOOTER = re.compile(r"\n+(?:\*\*)?(?:references|sources|参考(?:资料|文献)?|来源)(?:\*\*)?\s*[:：]?\s*\n.*\Z",
                     re.I | re.S)
REFUSAL_RE = re.compile(
    r"(?:cannot|can't|could not|couldn't|unable to) (?:find|answer|determine)|(?:do|does) not (?:contain|mention|provide)|"
    r"no (?:information|relevant)|not (?:mentioned|found|covered)|无法(?:回答|找到|确定)|没有(?:找到|相关|提到)|未(?:找到|提及)",
    re.I,
)


def apply_citations(text: str, sources: list[Evidence]) -> tuple[str, list[dict]]:
    """Keep markers that point at a source, renumber them 1..m by first use, append References."""
    text = _FOOTER.sub("", text.strip())
    renumber: dict[int, int] = {}

    def repl(match: re.Match) -> str:
        kept = []
        for part in re.split(r"\s*[,，]\s*", match.group(1)):
            n = int(part)
            if 1 <= n <= len(sources):
                renumber.setdefault(n, len(renumber) + 1)
                kept.append(f"[{renumber[n]}]")
        return "".join(dict.fromkeys(kept))  # a marker pointing to no source is removed

    body = _MARKER.sub(repl, text)
    body = re.sub(r"[ \t]+([.,;:!?。，；：！？])", r"\1", body)
    citations = []
    for original, n in sorted(renumber.items(), key=lambda kv: kv[1]):
        e = sources[original - 1]
        citations.append({"n": n, "source": e.source, "path": e.path, "start_line": e.start_line,
                          "end_line": e.end_line, "page": e.page, "snippet": " ".join(e.text.split())[:200]})
    return body, citations


def with_references(body: str, citations: list[dict]) -> str:
    if not citations:
        return body
    lines = [f"[{c['n']}] {c['path']}{'#page=' + str(c['page']) if c.get('page') else ''}:L{c['start_line']}-{c['end_line']}"
             for c in citations]
    return body.rstrip() + "\n\nReferences:\n" + "\n".join(lines)


_SENT_SPLIT = re.compile(r"(?<=[.!?。！？])\s+")


def attribute_sentences(text: str, sources: list[Evidence], threshold: float = 0.6) -> tuple[str, int, int]:
    """Claim-evidence alignment for answers without markers: each sentence gets the source that covers
    most of its content terms (>= threshold); sentences no source supports are removed.
    Returns (text with [n] markers, sentences kept, sentences removed)."""
    from kb_agent.text.tokenize import tokenize

    source_terms = [set(tokenize(e.text)) for e in sources]
    kept, removed = [], 0
    for sentence in _SENT_SPLIT.split(text.strip()):
        terms = set(tokenize(sentence))
        if not sentence.strip():
            continue
        if len(terms) < 3:  # connective fragments carry no claim of their own
            kept.append(sentence)
            continue
        coverage = [len(terms & st) / len(terms) for st in source_terms]
        best = max(range(len(sources)), key=lambda i: coverage[i]) if sources else -1
        if best >= 0 and coverage[best] >= threshold:
            end = len(sentence.rstrip()) - (1 if sentence.rstrip()[-1:] in ".!?。！？" else 0)
            kept.append(f"{sentence[:end].rstrip()} [{best + 1}]{sentence.rstrip()[end:]}")
        else:
            removed += 1
    claims = sum(1 for s in kept if _MARKER.search(s))
    return " ".join(kept), claims, removed
