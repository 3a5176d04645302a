"""Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), with optional per-query weights.

Equal weights let a retriever that found nothing in particular drag the fused list toward its noise. The
adaptive weights measure, per query and retriever, how far its best score stands out of its own top list
(a z-score: scale-free, so BM25 and cosine scores compare) and share the weight in that proportion."""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Sequence

_CONFIDENCE_DEPTH = 20  # the top list a retriever's best score is compared with
_MIN_CONFIDENCE = 0.1  # a flat list still counts a little: it may hold what the other missed
MATCHED_ONLY = ("bm25", "grep")  # retrievers that list only what matched the query, not every chunk by distance


def rrf(
    ranked_lists: Sequence[tuple[str, float, Sequence[Hashable]]], k: int = 60
) -> list[tuple[Hashable, float, dict[str, int]]]:
    """Fuse `(retriever name, weight, keys best-first)` lists into `(key, score, {retriever: rank})`.

    A key listed twice by one retriever keeps its best rank. Ties keep first-seen order.
    """
    scores: dict[Hashable, float] = {}
    ranks: dict[Hashable, dict[str, int]] = {}
    for name, weight, keys in ranked_lists:
        for rank, key in enumerate(keys, start=1):
            seen = ranks.setdefault(key, {})
            if name in seen:
                continue
            seen[name] = rank
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda key: -scores[key])
    return [(key, scores[key], ranks[key]) for key in order]


def confidence(scores: Sequence[float], matched_only: bool = False) -> float:
    """How far the best score stands above the rest of the top list, in its standard deviations (squared:
    a sharp peak should count clearly more than a mild one). A keyword list (`matched_only`) shorter than the
    depth matched nothing else: the rest of its top list scores 0 ("BDFL" on one page is as sure as a search
    gets, not unsure). A short dense list only means a small knowledge base."""
    top = list(scores[:_CONFIDENCE_DEPTH])
    if matched_only and top:
        top += [0.0] * (_CONFIDENCE_DEPTH - len(top))
    spread = statistics.pstdev(top) if len(top) >= 3 else 0.0
    z = (top[0] - statistics.mean(top)) / spread if spread > 0 else 0.0
    return max(z, _MIN_CONFIDENCE) ** 2


def adaptive_weights(lists: Sequence[tuple[str, float, Sequence[tuple[Hashable, float]]]]) -> dict[str, float]:
    """Per retriever name, a multiplier of its configured weight: its share of the summed confidence, times
    the number of retrievers (equal confidence leaves the weights as configured). A retriever over several
    knowledge bases counts its most confident list."""
    best: dict[str, float] = {}
    for name, weight, found in lists:
        if weight > 0 and found:
            matched_only = name.startswith(MATCHED_ONLY)
            best[name] = max(best.get(name, 0.0), confidence([score for _, score in found], matched_only))
    total = sum(best.values())
    if len(best) < 2 or total <= 0:
        return {}
    return {name: len(best) * c / total for name, c in best.items()}
