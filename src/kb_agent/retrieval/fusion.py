"""Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d))."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


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
