"""Tools run with the caller's access scope; read_file reads only indexed files the caller may see."""

import pytest

from conftest import write
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.searcher import Searcher
from kb_agent.tools.base import ToolArgsError, ToolContext, ToolDenied
from kb_agent.tools.registry import default_tools


@pytest.fixture
def ctx_for(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "guide.md", "# Guide\n" + "".join(f"line {i}\n" for i in range(2, 300)))
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nsalary bands\n")
    import docx

    document = docx.Document()
    document.add_heading("Policy", level=1)
    document.add_paragraph("Remote work is allowed on Fridays.")
    document.save(root / "policy.docx")
    engine.index([root])

    def make(groups=None):
        access = AccessFilter.unrestricted() if groups is None else AccessFilter.for_groups(groups)
        kbs = [engine.kb()]
        return ToolContext(engine.settings, access, kbs, Searcher(kbs, engine.settings, embedder=engine.embedder))

    return make


def _read(ctx, **args):
    tool = default_tools()["read_file"]
    return tool.run(tool.validate(args), ctx)


def test_read_file_returns_exact_lines(ctx_for):
    (item,) = _read(ctx_for(), path="docs/guide.md", start_line=10, end_line=12)
    assert item.text == "line 10\nline 11\nline 12" and item.citation == "docs/guide.md:L10-12"


def test_read_file_caps_the_number_of_lines(ctx_for):
    (item,) = _read(ctx_for(), path="docs/guide.md")
    assert item.start_line == 1 and item.end_line == 200


def test_read_file_of_extracted_formats_uses_the_extracted_text(ctx_for):
    (item,) = _read(ctx_for(), path="docs/policy.docx")
    assert "Remote work is allowed on Fridays." in item.text and "PK" not in item.text


@pytest.mark.parametrize("path", ["docs/hr/pay.md", "/etc/passwd", "docs/missing.md"])
def test_read_file_refuses_invisible_or_unknown_paths(ctx_for, path):
    with pytest.raises(ToolArgsError, match="no indexed file"):
        _read(ctx_for(["eng"]), path=path)


@pytest.mark.parametrize("path", ["../../etc/passwd", "docs/../docs/hr/pay.md", "docs\\..\\..\\x", "docs/a\x00.md"])
def test_read_file_refuses_traversal_before_lookup(ctx_for, path):
    with pytest.raises(ToolDenied, match="not allowed"):
        _read(ctx_for(["hr"]), path=path)


def test_read_file_allows_members(ctx_for):
    (item,) = _read(ctx_for(["hr"]), path="docs/hr/pay.md")
    assert "salary bands" in item.text


def test_tool_schemas_reject_bad_args():
    tools = default_tools()
    with pytest.raises(ToolArgsError, match="query"):
        tools["hybrid_search"].validate({"top_k": 3})
    with pytest.raises(ToolArgsError, match="top_k"):
        tools["grep_search"].validate({"query": "x", "top_k": 10_000})
    with pytest.raises(ToolArgsError):
        tools["read_file"].validate({"path": "a.md", "start_line": 0})


def test_search_tools_apply_the_callers_acl(ctx_for):
    tool = default_tools()["hybrid_search"]
    outsider = tool.run(tool.validate({"query": "salary bands"}), ctx_for(["eng"]))
    assert all("hr/" not in e.path for e in outsider)
    member = tool.run(tool.validate({"query": "salary bands"}), ctx_for(["hr"]))
    assert member[0].path == "docs/hr/pay.md"


def test_read_file_refuses_a_file_swapped_for_a_symlink_after_indexing(ctx_for, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    write(secret, "the launch code\n")
    target = tmp_path / "docs" / "guide.md"
    target.unlink()
    target.symlink_to(secret)
    with pytest.raises(ToolDenied, match="outside its indexed root"):
        _read(ctx_for(), path="docs/guide.md")


def test_read_file_refuses_binary_and_oversized_files(ctx_for, tmp_path):
    ctx = ctx_for()
    (tmp_path / "docs" / "guide.md").write_bytes(b"# Guide\n\x00\x01binary")
    with pytest.raises(ToolDenied, match="changed since it was indexed"):  # never served under a stale ACL
        _read(ctx, path="docs/guide.md")
    (tmp_path / "docs" / "guide.md").write_text("x" * 5000)
    ctx.settings = ctx.settings.model_copy(update={"read_file_max_bytes": 1000})
    with pytest.raises(ToolArgsError, match="limit"):
        _read(ctx, path="docs/guide.md")


def test_numbered_output_shows_file_line_numbers(ctx_for):
    from kb_agent.tools.file_tools import numbered

    (item,) = _read(ctx_for(), path="docs/guide.md", start_line=9, end_line=10)
    assert numbered(item) == " 9| line 9\n10| line 10"


def _file_qa(ctx, **args):
    tool = default_tools()["local_file_qa"]
    return tool.run(tool.validate(args), ctx)


@pytest.mark.parametrize("pattern", ["pay", "*.md", "hr/*", "PAY.MD"])
def test_local_file_qa_finds_files_by_fragment_or_glob_within_the_acl(ctx_for, pattern):
    assert "docs/hr/pay.md" in {e.path for e in _file_qa(ctx_for(["hr"]), pattern=pattern)}
    try:
        outsider = {e.path for e in _file_qa(ctx_for(["eng"]), pattern=pattern)}
    except ToolArgsError as exc:  # nothing visible matched
        assert "no indexed file" in str(exc)
        outsider = set()
    assert "docs/hr/pay.md" not in outsider


def test_local_file_qa_answers_from_the_matched_files(ctx_for):
    items = _file_qa(ctx_for(), pattern="guide", question="line 250")
    assert items[0].path == "docs/guide.md" and "line 250" in items[0].text


def test_local_file_qa_refuses_traversal(ctx_for):
    with pytest.raises(ToolDenied):
        _file_qa(ctx_for(), pattern="../*")


def test_every_tool_has_a_complete_card():
    for tool in default_tools().values():
        card = tool.card()
        assert card.name == tool.name and card.description and card.auth_scope and card.timeout_ms > 0
        assert card.input_schema["properties"] and card.output_schema["properties"]["evidence"]
        assert card.freshness in ("realtime", "near-realtime", "snapshot") and card.citation_policy


def test_runner_denies_unknown_tools_and_reports_bad_args(ctx_for):
    from kb_agent.tools.tasks import TaskRequest, ToolRunner

    tools, runner = default_tools(), ToolRunner()
    forged, bad, good = (
        TaskRequest(trace_id="t", tool="shell_exec", input={"cmd": "cat /etc/passwd"}),
        TaskRequest(trace_id="t", tool="read_file", input={"path": ""}),
        TaskRequest(trace_id="t", tool="read_file", input={"path": "docs/guide.md", "end_line": 3}),
    )
    results = runner.run_many([forged, bad, good], tools, ctx_for())
    assert [r.status for r in results] == ["denied", "error", "ok"]
    assert results[2].evidence[0].text.startswith("# Guide") and results[2].task_id == good.task_id


def test_runner_enforces_the_rate_limit(ctx_for, monkeypatch):
    from kb_agent.tools.file_tools import ReadFile
    from kb_agent.tools.tasks import TaskRequest, ToolRunner

    monkeypatch.setattr(ReadFile, "rate_limit_per_min", 2)
    tools, runner, ctx = default_tools(), ToolRunner(), ctx_for()
    request = {"tool": "read_file", "input": {"path": "docs/guide.md"}}
    statuses = [runner.run(TaskRequest(trace_id="t", **request), tools, ctx).status for _ in range(3)]
    assert statuses == ["ok", "ok", "denied"]


@pytest.mark.parametrize(
    ("question", "pattern"),
    [
        ("Which files mention salary?", "salary"),
        ("查找关于认证的文件", "认证"),
        ("What does docs/hr/pay.md say?", "docs/hr/pay.md"),
    ],
)
def test_file_questions_plan_a_local_file_qa_call(question, pattern, settings):
    from kb_agent.agent.plan import _file_calls
    from kb_agent.agent.rules import route_by_rules

    route, _ = route_by_rules(question)
    ctx = type("Ctx", (), {"tools": default_tools(), "settings": settings, "term_weights": None})()
    calls = _file_calls(ctx, route.model_dump(), question)
    assert calls[0] == {"name": "local_file_qa", "args": {"pattern": pattern, "question": question}}


def test_a_file_search_looks_up_the_rarest_words_not_the_longest(settings):
    """dev21 f2101: "application" names every page about apps; "Flask" names the WSGI page."""
    from kb_agent.agent.plan import _file_calls
    from kb_agent.agent.rules import route_by_rules

    question = "Which page explains how to mount a Flask app inside a FastAPI application?"
    route, _ = route_by_rules(question)
    rarity = {"mount": 4.5, "flask": 4.0, "insid": 3.2, "applic": 2.0, "app": 1.7, "fastapi": 0.8}

    def looked_up(weights):
        fields = {
            "tools": default_tools(),
            "settings": settings,
            "term_weights": staticmethod(weights) if weights else None,
        }
        ctx = type("Ctx", (), fields)()
        return [c["args"]["pattern"] for c in _file_calls(ctx, route.model_dump(), question)]

    assert looked_up(lambda terms: {t: rarity.get(t, 0.0) for t in terms}) == ["mount", "Flask"]
    assert looked_up(None) == ["application", "FastAPI"]  # control: by length, Flask is not looked up


def test_agent_answers_a_file_discovery_question_from_the_named_file(engine, tmp_path):
    write(tmp_path / "docs" / "guide.md", "# Guide\nNothing here.\n")
    write(tmp_path / "docs" / "benefits" / "salary.md", "# Salary\nSalaries are paid on the 25th of each month.\n")
    engine.index([tmp_path / "docs"])
    answer = engine.answer_query("Which files are about salary?")
    assert answer.route["query_type"] == "file_discovery"
    assert any(e["tool"] == "local_file_qa" and e["path"] == "docs/benefits/salary.md" for e in answer.evidence)
    body = answer.answer.split("\n\nReferences:", 1)[0]
    assert body.startswith("Files:\n- `docs/benefits/salary.md` — Salary [1]")  # the file is named, and cited
    assert answer.citations[0].path == "docs/benefits/salary.md" and answer.llm_calls == 0


def test_runner_times_out_a_slow_tool_and_keeps_the_others(ctx_for, monkeypatch):
    import threading

    from kb_agent.tools.file_tools import LocalFileQA
    from kb_agent.tools.tasks import TaskRequest, ToolRunner

    release, finished = threading.Event(), threading.Event()

    def slow(self, args, ctx):
        release.wait(60)
        finished.set()
        return []

    monkeypatch.setattr(LocalFileQA, "run", slow)
    monkeypatch.setattr(LocalFileQA, "timeout_ms", 200)
    results = ToolRunner().run_many(
        [
            TaskRequest(trace_id="t", tool="local_file_qa", input={"pattern": "guide"}),
            TaskRequest(trace_id="t", tool="read_file", input={"path": "docs/guide.md"}),
        ],
        default_tools(),
        ctx_for(),
    )
    assert not finished.is_set()  # the runner returned while the slow tool still ran
    release.set()
    assert results[0].status == "error" and "timed out" in results[0].error and results[1].status == "ok"


@pytest.mark.parametrize("ranked", [True, False], ids=["by_title", "control_found_by_name_first"])
def test_a_file_question_lists_the_file_whose_title_says_what_it_asks_first(engine, tmp_path, monkeypatch, ranked):
    """ "哪个文件讲了 OpenAPI 回调？" listed English OpenAPI reference pages, found by the name "openapi", above the
    Chinese page on callbacks (回调), which the search had found."""
    import kb_agent.agent.synthesize as synthesize

    root = tmp_path / "docs"
    for n in range(3):
        write(root / "reference" / f"openapi-{n}.md", f"# OpenAPI models {n}\nThe OpenAPI models of part {n}.\n")
    write(root / "zh" / "callbacks.md", "# OpenAPI 回调\n\n你可以在 OpenAPI 中记录回调的外部 API。\n")
    engine.index([root])
    if not ranked:
        monkeypatch.setattr(synthesize, "_by_file_match", lambda ctx, query, sources: sources)
    answer = engine.answer_query("哪个文件讲了 OpenAPI 回调？")
    first = answer.answer.split("\n")[1]
    assert ("callbacks.md" in first) is ranked
    assert ("— OpenAPI 回调 [1]" in first) is ranked  # the title, shown since the cited lines are its own


@pytest.mark.parametrize("read", [True, False], ids=["title_and_passage", "control_title_first"])
def test_a_file_question_about_a_fact_lists_the_file_whose_passage_says_it(engine, tmp_path, monkeypatch, read):
    """dev29 f2901 (Where do the docs explain why each worker process uses its own memory?) listed the page whose
    title says "Workers", found for a passage that only lists "Memory", above the deployment concepts page that
    explains it: a file question about a fact is answered by what the passage says as much as by the title."""
    import kb_agent.agent.synthesize as synthesize

    root = tmp_path / "docs"
    write(root / "server-workers.md", "# Server Workers\n\nRun several worker processes.\n\n* Replication\n* Memory\n")
    write(
        root / "concepts.md",
        "# Deployments Concepts\n\n## Memory per Process\n\nMultiple processes don't share any memory: each worker "
        "process has its own variables and memory.\n",
    )
    engine.index([root])
    if not read:
        monkeypatch.setattr(synthesize, "PASSAGE_SHARE", 0.0)
    answer = engine.answer_query("Where do the docs explain why each worker process uses its own memory?")
    first = answer.answer.split("\n")[1]
    assert ("concepts.md" in first) is read


def test_a_listed_file_shows_its_title_only_where_the_cited_lines_do():
    from kb_agent.agent.citations import CheckedAnswer
    from kb_agent.tools.base import Evidence

    top = Evidence(source="a.md", path="a.md", start_line=1, end_line=5, text="# Guide\n...", title="Guide")
    deep = Evidence(source="b.md", path="b.md", start_line=40, end_line=45, text="More.", title="Other guide")
    checked = CheckedAnswer([top, deep], "Which file is the guide?")
    assert checked.add_file(0) == "- `a.md` — Guide [1]"
    assert checked.add_file(1) == "\n- `b.md` [2]"  # lines 40-41 do not say "Other guide"


class _RankedSearcher:
    """A searcher whose fused ranking put the keyword side's best passage 8th, and an exact fetch 9th."""

    def __init__(self):
        from kb_agent.retrieval.types import SearchHit, SearchResponse

        def hit(n, ranks):
            return SearchHit(
                source="d.md", path="d.md", start_line=n, end_line=n, text=f"t{n}", chunk_id=str(n), ranks=ranks
            )

        ranks = [{"bm25": n + 4, "dense": n + 4} for n in range(7)] + [{"bm25": 1}, {"exact": 1}, {"dense": 9}]
        # far below: BM25's third passage, which the dense side did not find (dev12 t1205: fused 33rd)
        ranks += [{"bm25": 10 + n, "dense": 10 + n} for n in range(20)] + [{"bm25": 3}, {"bm25": 4}]
        ranks += [{"bm25": 2, "dense": 12}, {"dense": 2}]  # both sides see it; the semantic side's alone
        self.response = SearchResponse(query="q", mode="hybrid", hits=[hit(n, r) for n, r in enumerate(ranks)])
        self.asked: list[int] = []

    def search(self, query, *, access, mode, k, hops=1, beyond=0):
        self.asked.append(k)
        return self.response.model_copy(update={"hits": self.response.hits[: k + beyond]})


@pytest.mark.parametrize("rule", [True, False], ids=["heads_kept", "control_fused_top_k_only"])
def test_hybrid_search_keeps_a_retrievers_best_passage_that_fusion_ranked_low(monkeypatch, rule):
    """dev13 c1306 (Does the automatic documentation add overhead …?): the one line saying it was BM25's first
    passage and 7th after rank fusion, behind passages both sides ranked midway; the agent read 6 and refused.
    hybrid_search returns the fused top_k and each retriever's first three passages below them (not an exact
    fetch's), however far fusion put them."""
    from kb_agent.config import Settings
    from kb_agent.tools import search_tools

    if not rule:
        monkeypatch.setattr(search_tools, "_a_retrievers_best", lambda hit: False)
    searcher = _RankedSearcher()
    ctx = ToolContext(Settings(), AccessFilter.unrestricted(), [], searcher)
    found = search_tools.HybridSearch().run(search_tools.RankedSearchInput(query="q", top_k=6), ctx)
    assert [e.start_line for e in found] == [0, 1, 2, 3, 4, 5] + ([7, 30] if rule else [])
