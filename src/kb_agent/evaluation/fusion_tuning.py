"""`kb-agent eval fusion`: which BM25 / dense weights rank a knowledge base's gold passages best.

Equal RRF weights suit some collections and not others (on a multi-hop set whose next entity is rarely a
title, dense alone ranked above hybrid). This measures hybrid search at each weight pair of a small grid on
questions with known gold, and - since a pick made on the questions it is scored on flatters itself - also
k-fold: each fold is scored with the pair chosen on the other folds. A pair is recommended only when that
held-out figure beats equal weights; otherwise equal weights stay.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from kb_agent.evaluation.retrieval import QueryMemo, mrr_at, recall_at
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.identity import UserContext
from kb_agent.llm.embeddings import Embedder
from kb_agent.retrieval.types import SearchHit
from kb_agent.store.base import FusionWeights

if TYPE_CHECKING:
    from kb_agent.config import Settings
    from kb_agent.engine import Engine
    from kb_agent.store.base import KnowledgeBase

EQUAL = FusionWeights(1.0, 1.0)
# from keyword-led to dense-led; neither side at 0 (hybrid would be empty whenever the other is unavailable)
GRID: tuple[FusionWeights, ...] = (
    FusionWeights(1.0, 0.1),
    FusionWeights(1.0, 0.25),
    FusionWeights(1.0, 0.5),
    FusionWeights(1.0, 0.75),
    EQUAL,
    FusionWeights(0.75, 1.0),
    FusionWeights(0.5, 1.0),
    FusionWeights(0.25, 1.0),
    FusionWeights(0.1, 1.0),
)
FOLDS = 5
MIN_QUESTIONS = 20  # fewer, and a fold is one or two questions: no pick is worth storing


@dataclass
class GridRow:
    weights: FusionWeights
    recall5: list[float]  # per question
    mrr10: list[float]

    @property
    def mean_recall5(self) -> float:
        return statistics.fmean(self.recall5) if self.recall5 else 0.0

    @property
    def mean_mrr10(self) -> float:
        return statistics.fmean(self.mrr10) if self.mrr10 else 0.0


@dataclass
class FusionChoice:
    rows: list[GridRow]
    questions: int
    best: FusionWeights  # best on all the questions
    cross_validated_recall5: float  # each fold scored with the pair picked on the other folds
    equal_recall5: float
    recommended: FusionWeights  # `best` where its held-out figure beats equal weights, else equal
    reason: str

    def as_dict(self) -> dict:
        return {
            "questions": self.questions,
            "grid": [
                {
                    "bm25": r.weights.bm25,
                    "dense": r.weights.dense,
                    "recall@5": round(r.mean_recall5, 4),
                    "mrr@10": round(r.mean_mrr10, 4),
                }
                for r in self.rows
            ],
            "best": {"bm25": self.best.bm25, "dense": self.best.dense},
            "equal_recall@5": round(self.equal_recall5, 4),
            "cross_validated_recall@5": round(self.cross_validated_recall5, 4),
            "recommended": {"bm25": self.recommended.bm25, "dense": self.recommended.dense},
            "reason": self.reason,
        }


def _pick(rows: Sequence[GridRow], questions: Sequence[int]) -> GridRow:
    """Best mean R@5 over `questions`, then MRR@10, then the pair nearest equal weights (the grid's middle)."""
    middle = len(GRID) // 2

    def key(i: int) -> tuple[float, float, int]:
        row = rows[i]
        return (
            sum(row.recall5[q] for q in questions),
            sum(row.mrr10[q] for q in questions),
            -abs(i - middle),
        )

    return rows[max(range(len(rows)), key=key)]


def choose(rows: list[GridRow], folds: int = FOLDS) -> FusionChoice:
    n = len(rows[0].recall5) if rows else 0
    everyone = list(range(n))
    best = _pick(rows, everyone)
    equal = next(r for r in rows if r.weights == EQUAL)
    held_out = 0.0
    for fold in range(folds):
        test = [q for q in everyone if q % folds == fold]
        train = [q for q in everyone if q % folds != fold]
        if test and train:
            picked = _pick(rows, train)
            held_out += sum(picked.recall5[q] for q in test)
    cross_validated = held_out / n if n else 0.0
    if n < MIN_QUESTIONS:
        recommended, reason = EQUAL, f"only {n} question(s) with gold: at least {MIN_QUESTIONS} are needed to choose"
    elif best.weights == EQUAL:
        recommended, reason = EQUAL, "equal weights rank best"
    elif cross_validated <= equal.mean_recall5:
        recommended, reason = (
            EQUAL,
            (
                f"the best pair's gain does not hold on questions it was not chosen on ({folds}-fold R@5 "
                f"{cross_validated:.3f} vs {equal.mean_recall5:.3f} with equal weights)"
            ),
        )
    else:
        recommended, reason = (
            best.weights,
            (
                f"R@5 {best.mean_recall5:.3f} vs {equal.mean_recall5:.3f} with equal weights; {folds}-fold "
                f"{cross_validated:.3f}"
            ),
        )
    return FusionChoice(rows, n, best.weights, cross_validated, equal.mean_recall5, recommended, reason)


def measure_grid(
    questions: Sequence[tuple[str, Callable[[list[SearchHit]], tuple[float, float]]]],
    search: Callable[[str, FusionWeights], list[SearchHit]],
    grid: Sequence[FusionWeights] = GRID,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[GridRow]:
    """`questions`: (query, score) where score(hits) is (R@5, MRR@10) of that ranking; `search` ranks a
    query with the given weights."""
    rows = []
    for i, weights in enumerate(grid):
        row = GridRow(weights, [], [])
        for query, score in questions:
            recall, mrr = score(search(query, weights))
            row.recall5.append(recall)
            row.mrr10.append(mrr)
        rows.append(row)
        if on_progress:
            on_progress(i + 1, len(grid))
    return rows


def span_scorer(gold: list[dict], *, file_only: bool = False) -> Callable[[list[SearchHit]], tuple[float, float]]:
    """(R@5, MRR@10) of a ranking against an answer set's gold spans ({path, start_line, end_line}, paths
    relative to the indexed folder): a hit finds a span when it is of that file and overlaps its lines."""
    spans = [(g["path"], int(g.get("start_line", 1)), int(g.get("end_line", 1))) for g in gold]

    def finds(hit: SearchHit, span: tuple[str, int, int]) -> bool:
        path, start, end = span
        return hit.path.endswith(path) and (file_only or (hit.start_line <= end and start <= hit.end_line))

    def score(hits: list[SearchHit]) -> tuple[float, float]:
        found = sum(1 for span in spans if any(finds(h, span) for h in hits[:5]))
        first = next((rank for rank, h in enumerate(hits[:10]) if any(finds(h, s) for s in spans)), None)
        return (found / len(spans) if spans else 0.0), (0.0 if first is None else 1.0 / (first + 1))

    return score


def doc_scorer(rels: dict[str, int]) -> Callable[[list[SearchHit]], tuple[float, float]]:
    """(R@5, MRR@10) against BEIR relevance judgements (documents by id)."""

    def score(hits: list[SearchHit]) -> tuple[float, float]:
        ranked: list[str] = []
        for hit in hits:
            doc = str(hit.metadata.get("record_id", hit.doc_id))
            if doc not in ranked:
                ranked.append(doc)
        return recall_at(ranked, rels, 5), mrr_at(ranked, rels, 10)

    return score


def grid_search(
    kbs: list[KnowledgeBase], settings: Settings, embedder: Embedder | None, access: AccessFilter, k: int
) -> Callable[[str, FusionWeights], list[SearchHit]]:
    """search(query, weights): hybrid search with the configured fusion weights multiplied by `weights` and no
    KB's stored pair, one searcher per pair (pass a `QueryMemo` to embed each question once for all pairs)."""
    from kb_agent.retrieval.searcher import Searcher

    searchers: dict[FusionWeights, Searcher] = {}

    def search(query: str, weights: FusionWeights) -> list[SearchHit]:
        if weights not in searchers:
            update = {
                "rrf_weight_bm25": settings.rrf_weight_bm25 * weights.bm25,
                "rrf_weight_dense": settings.rrf_weight_dense * weights.dense,
            }
            searchers[weights] = Searcher(kbs, settings.model_copy(update=update), embedder=embedder, kb_weights=False)
        return searchers[weights].search(query, access=access, mode="hybrid", k=k).hits

    return search


def set_questions(items: list[dict]) -> list[tuple[str, Callable[[list[SearchHit]], tuple[float, float]]]]:
    """The questions of an answer set (`answers.load_set`, which checks the gold) that have gold spans
    (chitchat and unanswerable ones have none)."""
    return [
        (item["question"], span_scorer(item["gold"], file_only=item.get("type") == "file_discovery"))
        for item in items
        if item.get("gold") and item.get("question")
    ]


def tune_knowledge_base(
    engine: Engine,
    kb: str,
    items: list[dict],
    *,
    save: bool = False,
    user: UserContext | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Measure the grid on one knowledge base with an answer set's questions (searched as `user`, by default the
    local operator; an admin action like indexing, audited); `save` stores the recommended pair in the
    knowledge base, where every hybrid search over it then uses it (equal weights: the stored pair is forgotten)."""
    questions = set_questions(items)
    with engine.gate.request(user or UserContext.local_owner(), [kb], action="index", admin=True) as req:
        knowledge_base = engine.kb(kb)
        search = grid_search([knowledge_base], engine.settings, QueryMemo(engine.embedder()), req.access, k=10)
        choice = choose(measure_grid(questions, search, on_progress=on_progress))
        result = {"kb": kb, **choice.as_dict(), "stored_before": _weights_dict(knowledge_base.fusion_weights())}
        if save:
            stored = None
            if choice.recommended != EQUAL:
                measured = f"{choice.questions} questions, {choice.reason}"
                stored = FusionWeights(choice.recommended.bm25, choice.recommended.dense, measured)
            with knowledge_base.writing():
                knowledge_base.set_fusion_weights(stored)
            result["stored"] = _weights_dict(stored)
        req.audit("fusion", {k: v for k, v in result.items() if k != "grid"})
        return result


def _weights_dict(weights: FusionWeights | None) -> dict | None:
    return None if weights is None else asdict(weights)
