"""The knowledge graph: built while indexing, updated file by file, persisted, and ACL-scoped in graph_related."""

from __future__ import annotations

import json

import pytest

from conftest import SHARED, write
from kb_agent.engine import Engine
from kb_agent.governance.identity import UserContext


@pytest.fixture
def wiki(engine, tmp_path):
    root = tmp_path / "wiki"
    write(root / "index.md", "# Home\nStart with [the setup guide](guide/setup.md) and [[Deploy]].\n")
    write(root / "guide" / "setup.md", "# Setup\n## Install\nRun the installer. See PAY-12 for the budget.\n")
    write(root / "deploy.md", "# Deploy\nThis work blocks OPS-7 and relates to PAY-12.\n")
    write(root / "secret" / ".kbacl", "finance\n")
    write(root / "secret" / "budget.md", "# Budget\nPAY-12 is funded from the reserve; link: [home](../index.md)\n")
    tickets = [
        {
            "_id": "PAY-12",
            "issue_key": "PAY-12",
            "title": "Budget",
            "text": "Approve the 2026 budget.",
            "parent": "PAY-1",
            "subtasks": ["PAY-13"],
            "issuelinks": [{"type": "blocks", "key": "OPS-7"}],
        },
        {"_id": "PAY-13", "issue_key": "PAY-13", "title": "Sub", "text": "Collect quotes. Subtask of PAY-12."},
    ]
    write(root / "tickets.jsonl", "".join(json.dumps(t) + "\n" for t in tickets))
    engine.index([root])
    return engine


def _run(engine, args, groups=None):
    user = UserContext(user_id="u", groups=groups) if groups is not None else None
    return engine.run_tool("graph_related", args, user=user)


def _links(result):
    return {(e.path, e.title) for e in result.evidence}


def test_markdown_and_wiki_links_folders_and_headings(wiki):
    graph = wiki.kb().graph().graph
    assert graph.has_edge("file:wiki/index.md", "file:wiki/guide/setup.md")
    assert graph.has_edge("file:wiki/index.md", "file:wiki/deploy.md")  # [[Deploy]]
    assert graph.has_edge("dir:wiki/guide", "file:wiki/guide/setup.md")
    assert graph.has_edge("file:wiki/guide/setup.md", "heading:install")


def test_ticket_relations_from_fields_and_text(wiki):
    graph = wiki.kb().graph().graph
    rels = {(h, d["rel"], t) for h, t, d in graph.edges(data=True)}
    assert ("ticket:PAY-12", "parent", "ticket:PAY-1") in rels
    assert ("ticket:PAY-12", "subtask", "ticket:PAY-13") in rels
    assert ("ticket:PAY-12", "blocks", "ticket:OPS-7") in rels
    assert ("ticket:PAY-13", "parent", "ticket:PAY-12") in rels  # "Subtask of PAY-12" in the text


def test_graph_related_cites_the_lines_that_state_each_link(wiki):
    result = _run(wiki, {"entity": "PAY-12"})
    assert result.status == "ok"
    spans = {(e.path, e.start_line) for e in result.evidence}
    assert ("wiki/guide/setup.md", 3) in spans and ("wiki/deploy.md", 2) in spans
    assert any(e.path == "wiki/tickets.jsonl" and e.start_line == 1 for e in result.evidence)
    deploy = next(e for e in result.evidence if e.path == "wiki/deploy.md")
    assert deploy.text == "This work blocks OPS-7 and relates to PAY-12."


def test_graph_related_never_walks_restricted_edges(wiki):
    member = {e.path for e in _run(wiki, {"entity": "PAY-12"}, ["finance"]).evidence}
    outsider = {e.path for e in _run(wiki, {"entity": "PAY-12"}, ["eng"]).evidence}
    assert "wiki/secret/budget.md" in member
    assert "wiki/secret/budget.md" not in outsider and outsider
    # a restricted file's outgoing link is invisible too: home shows no backlink from the secret page
    home = _run(wiki, {"entity": "wiki/index.md", "depth": 1}, ["eng"])
    assert all("secret" not in e.path and "secret" not in e.title for e in home.evidence)
    hidden_only = _run(wiki, {"entity": "wiki/secret/budget.md"}, ["eng"])
    assert hidden_only.status == "error" and "nothing linked" in hidden_only.error


def test_graph_follows_edits_and_deletions_and_persists(wiki, settings, embedder, tmp_path):
    write(tmp_path / "wiki" / "deploy.md", "# Deploy\nNo tickets any more.\n")
    (tmp_path / "wiki" / "guide" / "setup.md").unlink()
    wiki.index([tmp_path / "wiki"])
    graph = wiki.kb().graph().graph
    assert not graph.has_edge("file:wiki/deploy.md", "ticket:OPS-7")
    assert "file:wiki/guide/setup.md" not in graph  # index.md's link to it is now a dead link
    assert graph.has_edge("file:wiki/index.md", "missing:guide/setup.md")
    wiki.close()
    reopened = Engine(settings, embedder=embedder)
    try:
        fresh = reopened.kb().graph()
        assert fresh.graph.number_of_edges() == graph.number_of_edges()
        assert fresh.graph.has_edge("file:wiki/index.md", "file:wiki/deploy.md")
    finally:
        reopened.close()


def test_graph_related_schema_and_unknown_entity(wiki):
    assert _run(wiki, {"entity": ""}).status == "error"
    assert _run(wiki, {"entity": "PAY-12", "depth": 9}).status == "error"
    assert _run(wiki, {"entity": "NOPE-1"}).status == "error"


CHANGES = SHARED / "data" / "commons_lang_changes" / "changes.jsonl"


@pytest.fixture(scope="module")
def lang(tmp_path_factory):
    if not CHANGES.is_file():
        pytest.skip("../shared/data/commons_lang_changes not available")
    from conftest import HashEmbedder
    from kb_agent.config import Settings

    settings = Settings(data_folder=tmp_path_factory.mktemp("lang") / "data", _env_file=None, llm_provider="none")
    engine = Engine(settings, embedder=HashEmbedder())
    engine.index([CHANGES], kb="lang")
    yield engine
    engine.close()


def test_ticket_key_question_returns_that_entry_first(lang):
    answer = lang.answer_query("what changed in LANG-1234?", kbs=["lang"])
    assert answer.route["query_type"] == "exact"
    first = answer.evidence[0]
    assert first["start_line"] == 1124 and first["tool"] == "graph_related"
    assert answer.citations and answer.citations[0].start_line == 1124


def test_release_question_is_answered_from_the_entry_with_a_citation(lang):
    answer = lang.answer_query("Which release fixed LANG-1000?", kbs=["lang"])
    assert not answer.refused
    assert "release: 3.4" in answer.answer and "LANG-1000" in answer.answer
    assert answer.citations[0].path == "changes.jsonl" and answer.citations[0].start_line == 1235


def test_links_follow_their_targets_being_added_and_removed(engine, tmp_path):
    root = tmp_path / "notes"
    write(root / "a.md", "# A\nSee [b](b.md).\n")
    engine.index([root])
    graph = engine.kb().graph().graph
    assert graph.has_edge("file:notes/a.md", "missing:b.md")
    write(root / "b.md", "# B\nHello.\n")
    engine.index([root])
    graph = engine.kb().graph().graph
    assert graph.has_edge("file:notes/a.md", "file:notes/b.md") and "missing:b.md" not in graph
    (root / "b.md").unlink()
    engine.index([root])
    graph = engine.kb().graph().graph
    assert "file:notes/b.md" not in graph and graph.has_edge("file:notes/a.md", "missing:b.md")
