"""Retrieval tools over the indexed knowledge bases; the caller's ACL travels in the ToolContext."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from kb_agent.retrieval.types import Mode, SearchHit
from kb_agent.tools.base import Evidence, Tool, ToolContext


def hit_to_evidence(hit: SearchHit, tool: str) -> Evidence:
    return Evidence.from_passage(hit, tool=tool)


class SearchInput(BaseModel):
    query: str = Field(min_length=1, max_length=1000, description="What to look for")
    top_k: int = Field(default=6, ge=1, le=30, description="How many passages to return")


class RankedSearchInput(SearchInput):
    hops: int = Field(
        default=1, ge=1, le=2, description="2 = also fetch documents the top passages name (multi-hop questions)"
    )


class _SearchTool(Tool):
    mode: ClassVar[Mode]
    Input = SearchInput

    def run(self, args: SearchInput, ctx: ToolContext) -> list[Evidence]:
        return [hit_to_evidence(h, self.name) for h in self._search(args, ctx, args.top_k)]

    def _search(self, args: SearchInput, ctx: ToolContext, k: int, beyond: int = 0) -> list[SearchHit]:
        """The searcher's first `k` hits (and the next `beyond` in fused order), its notices passed on."""
        response = ctx.require_searcher().search(
            args.query, access=ctx.access, mode=self.mode, k=k, hops=getattr(args, "hops", 1), beyond=beyond
        )
        ctx.notices.extend(n for n in response.notices if n not in ctx.notices)
        return response.hits


BURIED = "buried"
HEADS_NEAR = 4  # past top_k, the fused hits chosen as the top are (an identifier's literal matches first)
HEADS_BEYOND = 40  # how far past top_k a retriever's own best passages are looked for
RETRIEVER_HEADS = 3  # the keyword side's first passages kept wherever fusion ranked them, when the semantic
FAR_DOWN = 30  # side ranks them below this (or not at all)


def _side_rank(hit: SearchHit, side: str, missing: int) -> int:
    """The hit's best rank in the keyword ("bm25") or semantic ("dense") lists; `missing` when none lists it."""
    return min((rank for name, rank in hit.ranks.items() if name.startswith(side)), default=missing)


def _a_retrievers_best(hit: SearchHit) -> bool:
    """First of the keyword or the semantic ranking (not of the exact-identifier fetch, which is unranked), or
    among the keyword side's first three when the semantic side ranks it far down or not at all: BM25's third
    passage fell to 33rd after fusion, the dense side having ranked it lower still (a passage holding the
    question's words is a precise find; the semantic side's alone is often only near it)."""
    keyword, semantic = _side_rank(hit, "bm25", FAR_DOWN), _side_rank(hit, "dense", FAR_DOWN + 1)
    return keyword == 1 or semantic == 1 or (keyword <= RETRIEVER_HEADS and semantic > FAR_DOWN)


class HybridSearch(_SearchTool):
    name = "hybrid_search"
    description = (
        "Keyword (BM25) and semantic search fused by rank; the default for most questions. Returns top_k "
        "passages, and a retriever's own best passage where fusion ranked it lower."
    )
    mode = "hybrid"
    Input = RankedSearchInput

    def run(self, args: SearchInput, ctx: ToolContext) -> list[Evidence]:
        """Rank fusion buries a passage only one side finds: the keyword side's clear best ("Does the automatic
        documentation add overhead …?": the one line saying it, BM25 #1) fell to 7th behind passages both sides
        rank midway. The fused top_k, then each retriever's first passage if it fell below them."""
        found = self._search(args, ctx, args.top_k + HEADS_NEAR, HEADS_BEYOND - HEADS_NEAR)
        hits = found[: args.top_k] + [h for h in found[args.top_k :] if _a_retrievers_best(h)]
        return [_marked(hit_to_evidence(h, self.name), h, at >= args.top_k) for at, h in enumerate(hits)]


def _marked(evidence: Evidence, hit: SearchHit, beyond: bool) -> Evidence:
    """A keyword near-best read from far below the fused top (`BURIED` in its scores): a multi-step merge puts it
    after the steps' passages, which it would otherwise push out of the first five."""
    if not beyond or any(rank == 1 for rank in hit.ranks.values()):
        return evidence
    return evidence.model_copy(update={"scores": {**evidence.scores, BURIED: 1.0}})


class VectorSearch(_SearchTool):
    name = "vector_search"
    description = "Semantic search: finds passages that mean the same thing in other words (or language)."
    mode = "dense"
    Input = RankedSearchInput


class GrepSearch(_SearchTool):
    name = "grep_search"
    description = (
        "Exact text search (ripgrep) with ±10 lines of context: identifiers, error messages, config keys, ticket keys."
    )
    mode = "grep"
