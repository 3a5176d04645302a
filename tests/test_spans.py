"""One span type: a chunk, a search hit, a tool's evidence and an answer's citation share the span fields
and the one citation form; converting between them copies nothing by hand."""

from __future__ import annotations

from pathlib import Path

from kb_agent.agent.answer import Citation
from kb_agent.retrieval.types import SearchHit
from kb_agent.store.records import Chunk
from kb_agent.store.spans import Passage, Span, cite
from kb_agent.tools.base import Evidence

SRC = Path(__file__).resolve().parents[1] / "src" / "kb_agent"


def _chunk() -> Chunk:
    return Chunk(
        kb="docs", doc_id="guide.pdf", chunk_id="c1", source="/kb/guide.pdf", path="kb/guide.pdf",
        start_line=3, end_line=9, text="Tokens last 30 minutes.", title="Guide", page=2, acl=["eng"],
        heading_path=["Guide", "Tokens"],
    )  # fmt: skip


def test_every_span_type_writes_the_same_citation():
    chunk = _chunk()
    hit = SearchHit.from_chunk(chunk, score=0.5, chunk_id=chunk.chunk_id)
    evidence = Evidence.from_passage(hit, tool="hybrid_search")
    citation = Citation(n=1, source=chunk.source, path=chunk.path, start_line=3, end_line=9, page=2)
    expected = "kb/guide.pdf#page=2:L3-9"
    assert cite("kb/guide.pdf", 3, 9, 2) == expected
    assert {chunk.citation, hit.citation, evidence.citation, citation.citation} == {expected}
    assert all(isinstance(x, Span) for x in (hit, evidence, citation))


def test_conversions_carry_the_span_and_the_acl():
    hit = SearchHit.from_chunk(_chunk(), score=0.5, chunk_id="c1", scores={"bm25": 2.0})
    evidence = Evidence.from_passage(hit, tool="t")
    assert isinstance(evidence, Passage) and evidence.key == hit.key == ("/kb/guide.pdf", 3, 9, 2)
    assert (evidence.acl, evidence.kb, evidence.doc_id, evidence.scores) == (
        ["eng"],
        "docs",
        "guide.pdf",
        {"bm25": 2.0},
    )
    assert evidence.tool == "t" and evidence.text == "Tokens last 30 minutes."
    assert evidence.heading_path == ["Guide", "Tokens"]  # what the extractive answer reads a line under


def test_an_answer_citation_never_shows_who_may_read_its_source():
    citation = Citation(n=1, source="/kb/a.md", path="kb/a.md", start_line=1, end_line=2, acl=["hr"], kb="x")
    dumped = citation.model_dump()
    assert "acl" not in dumped and "kb" not in dumped and dumped["path"] == "kb/a.md"


def test_one_citation_formatter():
    """`:L{start}-{end}` is written by store/spans.py:cite only (chunk ids and eval rows aside)."""
    writers = sorted(
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if ":L{" in p.read_text(encoding="utf-8") and p.parts[-2] != "evaluation"
    )
    assert writers == ["agent/tool_exec.py", "retrieval/searcher.py", "store/spans.py"]
