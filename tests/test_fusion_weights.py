"""Per-knowledge-base fusion weights: measured by `kb-agent eval fusion`, stored in the KB, used by hybrid search."""

import json

import pytest

from kb_agent.evaluation.fusion_tuning import EQUAL, GRID, MIN_QUESTIONS, GridRow, choose, span_scorer
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.errors import AccessDenied
from kb_agent.governance.identity import UserContext
from kb_agent.retrieval.searcher import Searcher
from kb_agent.retrieval.types import SearchHit
from kb_agent.store.base import FusionWeights

ALL = AccessFilter.unrestricted()


@pytest.fixture
def indexed(engine, docs):
    """The shared documentation folder (conftest), indexed and embedded."""
    engine.index([docs])
    engine.embed()
    return engine


@pytest.mark.parametrize(
    "raw",
    ["", None, "{", '{"bm25": 1}', '{"bm25": "x", "dense": 1}', '{"bm25": 0, "dense": 1}',
     '{"bm25": -1, "dense": 1}', '{"bm25": NaN, "dense": 1}', '{"bm25": Infinity, "dense": 1}', "[1, 2]"],
)  # fmt: skip
def test_a_damaged_or_empty_stored_pair_is_ignored(raw):
    assert FusionWeights.from_meta(raw) is None


def test_a_stored_pair_round_trips():
    weights = FusionWeights(1.0, 0.25, "40 questions")
    assert FusionWeights.from_meta(weights.as_meta()) == weights


def _disagreeing(indexed, monkeypatch):
    """BM25 and the dense side each put a different chunk first, equally sure of it; with equal weights BM25's
    wins (the dense side ranks it second, BM25 ranks the dense side's last)."""
    kb = indexed.kb()
    ids = sorted(i for i, _ in kb.lexical.search("request body errors background tasks retry loop", 10, ALL))
    keyword_first, dense_first, other = ids[0], ids[1], ids[2]
    bm25 = [(keyword_first, 3.0), (other, 2.0), (dense_first, 1.0)]
    dense = [(dense_first, 0.9), (keyword_first, 0.8), (other, 0.7)]
    monkeypatch.setattr(kb.lexical, "search", lambda q, k, a, **kw: bm25[:k])
    monkeypatch.setattr(kb.vectors, "search", lambda v, k, a: dense[:k])
    chunks = kb.catalog.get_chunks([keyword_first, dense_first])
    return kb, chunks[keyword_first].chunk.path, chunks[dense_first].chunk.path


def _top(indexed, **kw) -> str:
    # plain RRF: the stored weights alone decide (adaptive fusion would read BM25's three hits as sure of its first)
    settings = indexed.settings.model_copy(update={"fusion": "rrf"})
    searcher = Searcher([indexed.kb()], settings, embedder=indexed.embedder(), **kw)
    return searcher.search("anything", access=ALL, mode="hybrid", k=3).hits[0].path


def test_hybrid_search_follows_the_knowledge_bases_stored_weights(indexed, monkeypatch):
    kb, keyword_path, dense_path = _disagreeing(indexed, monkeypatch)
    assert _top(indexed) == keyword_path  # nothing stored: the configured (equal) weights
    with kb.writing():
        kb.set_fusion_weights(FusionWeights(0.1, 1.0, "measured"))
    assert _top(indexed) == dense_path
    assert _top(indexed, kb_weights=False) == keyword_path  # control: the stored pair left out
    with kb.writing():
        kb.set_fusion_weights(None)
    assert kb.fusion_weights() is None and _top(indexed) == keyword_path


def test_a_damaged_stored_pair_leaves_the_configured_weights(indexed, monkeypatch):
    kb, keyword_path, _ = _disagreeing(indexed, monkeypatch)
    with kb.writing():
        kb.catalog.set_meta("fusion_weights", '{"bm25": 0, "dense": 1}')
    assert _top(indexed) == keyword_path


def test_storing_weights_is_a_write():
    from kb_agent.store.base import SharedParts

    parts = SharedParts()
    parts._writing = False
    with pytest.raises(RuntimeError, match="inside"):
        parts.set_fusion_weights(FusionWeights())


def _rows(per_pair: dict[FusionWeights, list[float]]) -> list[GridRow]:
    return [GridRow(w, per_pair.get(w, per_pair[EQUAL]), [0.0] * len(per_pair[EQUAL])) for w in GRID]


def test_a_pair_that_wins_everywhere_is_recommended():
    n = 40
    dense_led = GRID[-2]
    choice = choose(_rows({EQUAL: [0.5] * n, dense_led: [1.0] * n}))
    assert choice.best == choice.recommended == dense_led
    assert choice.cross_validated_recall5 == pytest.approx(1.0)


def test_a_pair_that_wins_on_one_lucky_question_is_not_recommended():
    """The best pair on all questions won by one question; chosen on four folds and scored on the fifth, its
    gain is gone: equal weights stay (control: the same rows with the gain spread over every fold)."""
    n = 40
    equal = [0.5] * n
    lucky = [0.5] * n
    lucky[0] = 1.0  # one question only
    unlucky = [0.5] * n
    unlucky[1] = 1.0  # another pair, another single question - in a different fold
    rows = _rows({EQUAL: equal, GRID[0]: lucky, GRID[-1]: unlucky})
    choice = choose(rows)
    assert choice.best in (GRID[0], GRID[-1]) and choice.recommended == EQUAL
    assert "does not hold" in choice.reason
    spread = [1.0 if q % 2 == 0 else 0.5 for q in range(n)]  # half the questions, in every fold
    assert choose(_rows({EQUAL: equal, GRID[0]: spread})).recommended == GRID[0]


def test_too_few_questions_recommend_equal_weights():
    n = MIN_QUESTIONS - 1
    choice = choose(_rows({EQUAL: [0.0] * n, GRID[0]: [1.0] * n}))
    assert choice.best == GRID[0] and choice.recommended == EQUAL and "at least" in choice.reason


def test_span_scorer_counts_gold_spans_found_in_the_top_five():
    def hit(path, start, end):
        return SearchHit(source=path, path=path, start_line=start, end_line=end, text="", score=0.0, kb="k",
                         doc_id=path, chunk_id=f"{path}:{start}")  # fmt: skip

    score = span_scorer(
        [{"path": "a.md", "start_line": 10, "end_line": 12}, {"path": "b.md", "start_line": 1, "end_line": 1}]
    )
    assert score([hit("docs/a.md", 5, 11), hit("docs/c.md", 1, 9)]) == (0.5, 1.0)
    assert score([hit("docs/c.md", 1, 9), hit("docs/a.md", 13, 20)]) == (0.0, 0.0)  # same file, other lines
    far = [hit(f"docs/x{i}.md", 1, 1) for i in range(5)] + [hit("docs/b.md", 1, 1)]
    assert score(far) == (0.0, 1 / 6)  # found at 6: in MRR@10, not R@5


def _set(tmp_path, n: int):
    rows = [
        {"id": f"q{i}", "question": q, "gold": [{"path": p, "start_line": 2, "end_line": 2}]}
        for i in range(n)
        for q, p in [("bound the retry loop", "config.md"), ("read a JSON request body", "body.md")][i % 2 : i % 2 + 1]
    ]
    rows.append({"id": "chat", "question": "hello", "type": "chitchat", "gold": []})
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_eval_fusion_measures_stores_and_audits(indexed, tmp_path):
    from kb_agent.evaluation.answers import load_set
    from kb_agent.evaluation.fusion_tuning import tune_knowledge_base

    items = load_set(_set(tmp_path, 24))
    result = tune_knowledge_base(indexed, indexed.settings.default_kb, items, save=True)
    assert result["questions"] == 24 and len(result["grid"]) == len(GRID)  # the chitchat line has no gold
    assert all(row["recall@5"] == 1.0 for row in result["grid"])  # every pair finds these: nothing to gain
    assert result["recommended"] == {"bm25": 1.0, "dense": 1.0} and result["stored"] is None
    assert indexed.kb().fusion_weights() is None
    (record,) = indexed.audit.records("fusion")
    assert record["recommended"] == {"bm25": 1.0, "dense": 1.0} and "grid" not in record


def test_eval_fusion_is_an_admin_action(indexed, tmp_path):
    from kb_agent.evaluation.answers import load_set
    from kb_agent.evaluation.fusion_tuning import tune_knowledge_base

    items = load_set(_set(tmp_path, 4))
    reader = UserContext(user_id="bob", groups=["staff"], admin=False)
    with pytest.raises(AccessDenied):
        tune_knowledge_base(indexed, indexed.settings.default_kb, items, save=True, user=reader)
    # control: the local operator may
    assert tune_knowledge_base(indexed, indexed.settings.default_kb, items)["questions"] == 4


@pytest.mark.parametrize("gold", ["a.md", [{"start_line": 1}], [{"path": "a.md", "start_line": "one"}], [3]])
def test_a_malformed_gold_entry_is_a_clear_error(tmp_path, gold):
    """For `eval fusion` and `eval answers` alike (both read sets with load_set)."""
    from kb_agent.evaluation.answers import load_set
    from kb_agent.evaluation.retrieval import DatasetError

    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "q7", "question": "Where?", "gold": gold}) + "\n")
    with pytest.raises(DatasetError, match="q7: `gold` must be"):
        load_set(path)
    # control: a well-formed entry (lines optional) is a question with gold
    path.write_text(json.dumps({"id": "q7", "question": "Where?", "gold": [{"path": "a.md"}]}) + "\n")
    assert load_set(path)[0]["gold"] == [{"path": "a.md"}]
