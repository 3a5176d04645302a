"""Hybrid fusion, diagnostics, grep windows, dense coverage and the embedding cache."""

import pytest

from conftest import write
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.fusion import adaptive_weights, confidence, rrf
from kb_agent.retrieval.grep import GrepFile, grep_keywords, grep_search

ALL = AccessFilter.unrestricted()


def test_rrf_formula_weights_and_ranks():
    fused = rrf([("bm25", 1.0, ["a", "b", "c"]), ("dense", 2.0, ["c", "a"])], k=60)
    scores = {key: score for key, score, _ in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 2 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 2 / 61)
    assert [key for key, _, _ in fused] == ["c", "a", "b"]
    assert dict((key, ranks) for key, _, ranks in fused)["b"] == {"bm25": 2}


def test_confidence_is_scale_free_and_favours_a_sharp_peak():
    sharp, flat = [9.0, 2.0, 1.9, 1.8, 1.7, 1.6], [0.81, 0.80, 0.80, 0.79, 0.79, 0.78]
    assert confidence(sharp) > confidence(flat)
    assert confidence([s * 100 for s in flat]) == pytest.approx(confidence(flat))  # BM25 vs cosine scales
    assert confidence([1.0, 1.0, 1.0]) == confidence([2.0]) == pytest.approx(0.01)  # flat or short: the floor
    weights = adaptive_weights([("bm25", 1.0, [("a", s) for s in sharp]), ("dense", 1.0, [("b", s) for s in flat])])
    assert weights["bm25"] > 1.0 > weights["dense"] and sum(weights.values()) == pytest.approx(2.0)
    full = flat * 4  # a top list as deep as the depth: nothing left out to read as 0
    same = adaptive_weights([("bm25", 1.0, [("a", s) for s in full]), ("dense", 1.0, [("b", s) for s in full])])
    assert same == pytest.approx({"bm25": 1.0, "dense": 1.0})  # equal confidence: the configured weights
    assert adaptive_weights([("bm25", 1.0, [("a", 1.0)])]) == {}  # one retriever: nothing to share


def test_a_keyword_list_that_matched_few_chunks_is_sure_of_them():
    # "BDFL" is on one page: BM25 lists it alone, the dense side lists every chunk by distance
    dense = [("b", 0.9 - i * 0.01) for i in range(30)]
    weights = adaptive_weights([("bm25", 1.0, [("a", 9.1)]), ("dense", 1.0, dense)])
    assert weights["bm25"] > 1.5 > 0.5 > weights["dense"]
    assert confidence([9.1], matched_only=True) > confidence([0.9, 0.89, 0.88], matched_only=True) > 1.0
    # control: read like a dense list (nothing padded), the lone keyword hit had the floor and lost the fusion
    assert confidence([9.1]) == pytest.approx(0.01)
    # a short dense list is a small knowledge base, not a sure one
    flat = [0.81, 0.80, 0.80, 0.79, 0.79, 0.78] * 4
    assert adaptive_weights([("bm25", 1.0, [("a", s) for s in flat]), ("dense", 1.0, [("b", 0.9)])])["dense"] < 1


@pytest.fixture
def docs(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "retry.md", "# Retries\nSet KB_AGENT_MAX_ITERATIONS to bound the retry loop.\n")
    write(root / "cache.md", "# Caching\nThe embedding cache is keyed by content hash.\n")
    write(root / "zh.md", "# 检索\n混合检索使用倒数排序融合。\n")
    lines = [f"filler line {i}" for i in range(60)]
    lines[5] = "the walrus appears here"
    lines[12] = "the walrus again nearby"
    lines[50] = "a lonely walrus far below"
    write(root / "long.txt", "\n".join(lines) + "\n")
    engine.index([root])
    return engine


def test_hybrid_keeps_per_retriever_diagnostics(docs):
    docs.embed()
    response = docs.search("KB_AGENT_MAX_ITERATIONS retry loop", access=ALL, mode="hybrid", k=3)
    top = response.hits[0]
    assert top.path == "docs/retry.md"
    assert set(top.ranks) == {"bm25", "dense"} and top.ranks["bm25"] == 1
    assert "bm25" in top.scores and "dense" in top.scores
    assert response.dense_coverage == 1.0
    assert {"bm25_ms", "dense_ms", "embed_ms", "total_ms"} <= set(response.timings_ms)


@pytest.mark.parametrize("hops", [1, 2])
def test_hits_beyond_the_top_k_do_not_change_the_top_k(docs, hops):
    """`beyond` returns the next fused hits after the top k; the top k stays what it was, even for a query
    with an identifier, whose literal matches are looked for among the first k*5 (a deeper request had pulled
    one from far down into HotpotQA's first five)."""
    docs.embed()
    query = "KB_AGENT_MAX_ITERATIONS retry loop cache"
    searcher = docs.searcher()
    plain = searcher.search(query, access=ALL, mode="hybrid", k=2, hops=hops)
    wide = searcher.search(query, access=ALL, mode="hybrid", k=2, hops=hops, beyond=3)
    keys = [(h.path, h.start_line) for h in wide.hits]
    assert keys[:2] == [(h.path, h.start_line) for h in plain.hits]
    assert 2 < len(keys) <= 5 and len(set(keys)) == len(keys)


def test_hybrid_before_embedding_says_so(docs):
    response = docs.search("retry loop", access=ALL, mode="hybrid")
    assert response.hits and response.hits[0].path == "docs/retry.md"
    assert any("no chunk is embedded" in n for n in response.notices)


def test_partial_coverage_is_reported(docs, tmp_path):
    docs.embed()
    write(tmp_path / "docs" / "new.md", "# New\nfresh unembedded page\n")
    docs.index([tmp_path / "docs"])
    response = docs.search("fresh page", access=ALL, mode="hybrid")
    assert 0 < response.dense_coverage < 1
    assert any("cover" in n for n in response.notices)


def test_embedding_cache_avoids_re_embedding(docs, embedder, tmp_path):
    docs.embed()
    first = embedder.passages_embedded
    assert first == docs.kb().catalog.count_chunks()
    (tmp_path / "docs" / "cache.md").rename(tmp_path / "docs" / "caching.md")
    docs.index([tmp_path / "docs"])
    stats = docs.embed()
    assert stats["embedded"] == 0 and embedder.passages_embedded == first
    assert docs.search("content hash", access=ALL, mode="dense").hits[0].path == "docs/caching.md"


def test_chinese_query_finds_chinese_doc(docs):
    assert docs.search("倒数排序融合", access=ALL, mode="bm25").hits[0].path == "docs/zh.md"


@pytest.mark.ripgrep
def test_grep_windows_merge_and_cite_exact_lines(docs):
    hits = docs.search("walrus", access=ALL, mode="grep", k=10).hits
    spans = sorted((h.start_line, h.end_line) for h in hits if h.path == "docs/long.txt")
    # matches on lines 6 and 13 (±10) merge into one passage; line 51 gets its own window
    assert spans == [(1, 23), (41, 60)]
    for hit in hits:
        with open(hit.source, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        assert hit.text == "\n".join(lines[hit.start_line - 1 : hit.end_line])


@pytest.mark.ripgrep
def test_grep_only_reads_the_files_it_is_given(tmp_path):
    allowed = write(tmp_path / "ok.txt", "secret walrus\n")
    forbidden = write(tmp_path / "no.txt", "secret walrus\n")
    passages = grep_search("walrus", [GrepFile(str(allowed), "ok.txt", "ok.txt")], context=2)
    assert [p.file.path for p in passages] == ["ok.txt"]
    assert forbidden.exists()


def test_grep_keywords():
    assert grep_keywords("What is the KB_AGENT_MAX_ITERATIONS of LANG-1234?") == [
        "KB_AGENT_MAX_ITERATIONS",
        "LANG-1234",
    ]
    assert grep_keywords("如何声明请求体") == ["声明", "请求"]


@pytest.mark.ripgrep
def test_cap_per_document_setting(docs):
    docs.settings.max_chunks_per_doc = 1
    hits = docs.search("walrus", access=ALL, mode="grep", k=10).hits
    assert [h.path for h in hits] == ["docs/long.txt"]


def test_unknown_mode_is_rejected(docs):
    with pytest.raises(ValueError, match="unknown search mode"):
        docs.search("x", access=ALL, mode="fuzzy")  # type: ignore[arg-type]


def test_query_identifiers_are_names_not_years_or_hyphenated_prose():
    from kb_agent.retrieval.exact import identifiers

    assert identifiers("Is max_age in BackgroundTasks, LANG-75 or status 418 served on 8080?") == [
        "max_age",
        "BackgroundTasks",
        "LANG-75",
        "418",
        "8080",
    ]
    assert identifiers("Which runner-up of the 1999 championship was a mom-and-pop founder in 2005?") == []
    assert identifiers("Install `python-multipart` and read `2005`") == ["python-multipart", "2005"]
    # an acronym that opens a class name: no lower-upper turn, still a name; plural acronyms are prose
    assert identifiers("HTTPConnection 类要从哪个模块导入？") == ["HTTPConnection"]
    assert identifiers("Which URLs and IDs do the APIs use?") == []
    # dotted abbreviations are prose: "a U.S. women's league" put every passage saying U.S. first
    assert identifiers("Debbie Black played in a U.S. women's league, e.g. the ABL, in Washington D.C.?") == []
    assert identifiers("Is `U.S.` or fastapi.responses the name?") == ["U.S.", "fastapi.responses"]


def test_passages_holding_a_rare_identifier_come_first(engine, tmp_path):
    root = tmp_path / "docs"
    write(
        root / "a.md",
        "# Typos\nThis release fixes 75 typos across the docs (LANG-85) and many typos in the typos page.\n",
    )
    write(root / "b.md", "# Change\nLANG-75 adds a null check.\n")
    for i in range(30):
        write(root / f"filler{i}.md", f"# Filler {i}\nUnrelated page number {i} about gardens.\n")
    engine.index([root])
    hits = engine.search("typos typos LANG-75", access=ALL, mode="bm25", k=3).hits
    assert hits[0].path.endswith("b.md")


def test_a_dotted_abbreviation_puts_no_passage_first(engine, tmp_path):
    """ "U.S." is no dotted name: the passages that say it must not outrank the one naming the player asked about
    (before, all three U.S. pages came first and the player's page fell out of the top 3)."""
    root = tmp_path / "docs"
    write(root / "player.md", "# Player\nDebbie Black played for the American Basketball League and the WNBA.\n")
    for i in range(3):
        write(root / f"us{i}.md", f"# Page {i}\nSold in U.S. and Canada stores, item {i}.\n")
    for i in range(70):  # U.S. is rare: in fewer than 5% of the chunks
        write(root / f"filler{i}.md", f"# Filler {i}\nUnrelated page number {i} about gardens.\n")
    engine.index([root])
    query = "Debbie Black played in a U.S. women's league other than the WNBA; in what season did it begin?"
    assert engine.search(query, access=ALL, mode="bm25", k=3).hits[0].path.endswith("player.md")


def test_a_rare_identifier_ranked_below_the_fused_depth_still_comes_first(engine, tmp_path, monkeypatch):
    """The page holding the identifier shares no other word of the question (a Chinese question, an English
    reference page): fusion ranked it below every page of the question's other words, so exact-first never
    saw it (here: the dense side alone). The chunks a keyword search for the identifier alone finds now join."""
    from kb_agent.retrieval.searcher import Searcher

    root = tmp_path / "docs"
    write(root / "status.md", "# Codes\n`status.HTTP_418_IM_A_TEAPOT` is a teapot.\n")
    for i in range(40):
        write(root / f"page{i}.md", f"# Status {i}\nThe status module has a constant for each status code {i}.\n")
    engine.index([root])
    engine.embed()
    query = "status 418 constant"
    # the dense side alone ranks by shared words: every page but the one holding the identifier
    assert engine.search(query, access=ALL, mode="dense", k=3).hits[0].path.endswith("status.md")
    assert engine.search(query, access=ALL, mode="hybrid", k=3).hits[0].path.endswith("status.md")
    monkeypatch.setattr(Searcher, "_with_exact_candidates", lambda self, ranked, exact, access, k: ranked)
    assert not any(h.path.endswith("status.md") for h in engine.search(query, access=ALL, mode="dense", k=3).hits)


def test_fetching_an_identifiers_holders_keeps_the_callers_acl(engine, tmp_path):
    """The fetch is a second keyword search: it runs with the caller's filter, and its chunks pass the same ACL
    re-check as any hit. A member of hr gets the restricted page fetched (what would leak); eng does not."""
    root = tmp_path / "docs"
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "status.md", "# Codes\n`status.HTTP_418_IM_A_TEAPOT` is a teapot.\n")
    for i in range(40):
        write(root / f"page{i}.md", f"# Status {i}\nThe status module has a constant for each status code {i}.\n")
    engine.index([root])
    engine.embed()
    query = "status 418 constant"

    def paths(groups: list[str]) -> list[str]:
        return [h.path for h in engine.search(query, access=AccessFilter.for_groups(groups), mode="dense", k=3).hits]

    assert paths(["hr"])[0].endswith("status.md")  # control: the fetch brings it to a reader allowed to see it
    assert not any(p.endswith("status.md") for p in paths(["eng"]))


def test_a_double_quoted_title_reorders_but_does_not_fetch_its_holders():
    from kb_agent.retrieval.exact import fetched_identifiers, reordering_identifiers

    question = 'When was the singer born whose third album is "Diamond Cut"?'
    assert reordering_identifiers(question) == ["Diamond Cut"]
    assert fetched_identifiers(["Diamond Cut"], question) == []
    lookup = "HTTP 418 `status_code` constant"
    assert fetched_identifiers(reordering_identifiers(lookup), lookup) == ["418", "status_code"]


def test_only_lookups_and_code_like_names_reorder_a_prose_question():
    from kb_agent.retrieval.exact import reordering_identifiers

    assert reordering_identifiers("LANG-75") == ["LANG-75"]
    assert reordering_identifiers("what did LANG-75 fix") == ["LANG-75"]
    assert reordering_identifiers("How do I set max_age on a cookie response?") == ["max_age"]
    assert reordering_identifiers("What does `allow_origins` do in the middleware config?") == ["allow_origins"]
    # gene and product names in a sentence look like ticket keys or CamelCase: no reordering (SciFact -2.2 nDCG)
    assert reordering_identifiers("BCL-2 promotes the apoptotic effects of c-Myc in tumour cells.") == []
    assert reordering_identifiers("APOE4 expression in iPSC-derived neurons decreases tau phosphorylation.") == []


def test_a_prose_question_keeps_its_ranking(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# Apoptosis\nBcl2 family proteins antagonise apoptosis driven by the Myc oncogene.\n")
    write(root / "b.md", "# Note\nBCL-2 is also a gene name.\n")
    for i in range(30):
        write(root / f"filler{i}.md", f"# Filler {i}\nUnrelated page number {i} about gardens.\n")
    engine.index([root])
    hits = engine.search("BCL-2 family antagonise apoptosis driven by Myc oncogene", access=ALL, mode="bm25").hits
    assert hits[0].path.endswith("a.md")  # exact-first would have put b.md (which holds "BCL-2") first


def test_hybrid_embeds_and_searches_vectors_beside_the_keyword_side(docs, embedder, monkeypatch):
    import threading

    docs.embed()
    threads: list[tuple[str, int]] = []
    embed_query = embedder.embed_query
    kb = docs.kb()
    bm25 = kb.lexical.search

    def record_embed(text):
        threads.append(("dense", threading.get_ident()))
        return embed_query(text)

    def record_bm25(*args, **kwargs):
        threads.append(("bm25", threading.get_ident()))
        return bm25(*args, **kwargs)

    monkeypatch.setattr(embedder, "embed_query", record_embed)
    monkeypatch.setattr(kb.lexical, "search", record_bm25)
    docs.search("retry loop", access=ALL, mode="hybrid", k=3)
    seen = dict(threads)
    assert seen["bm25"] == threading.get_ident() != seen["dense"]
    threads.clear()
    with kb.writing():  # inside an index run the search stays on the writer's thread (its own rows)
        docs.search("retry loop", access=ALL, mode="hybrid", k=3)
    assert dict(threads)["dense"] == threading.get_ident()


@pytest.mark.parametrize("fusion", ["adaptive", "rrf"])
def test_adaptive_fusion_follows_the_retriever_that_is_sure(docs, monkeypatch, fusion):
    """BM25 finds one chunk far above the rest; the dense side's list is flat and puts another chunk first.
    Adaptive fusion ranks BM25's clear winner first; the fixed equal weights (control) put the dense
    side's noise first."""
    docs.embed()
    docs.settings.fusion = fusion
    kb = docs.kb()
    right, noise, *others = sorted(i for i, _ in kb.lexical.search("retry loop embedding cache walrus 检索", 10, ALL))
    sharp = [(right, 10.0), (noise, 1.0), *[(i, 1.0) for i in others]]
    flat = [(noise, 0.80), *[(i, 0.80) for i in others], (right, 0.79)]
    monkeypatch.setattr(kb.lexical, "search", lambda query, k, access, **kw: sharp[:k])
    monkeypatch.setattr(kb.vectors, "search", lambda vector, k, access: flat[:k])
    top = docs.search("anything", access=ALL, mode="hybrid", k=2).hits[0]
    assert (top.ranks == {"bm25": 1, "dense": len(flat)}) is (fusion == "adaptive")  # BM25's winner
