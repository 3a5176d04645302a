"""Jira, Confluence and web_fetch against a local HTTP server with real payload shapes; index_command."""

from __future__ import annotations

import json

import pytest

from conftest import write
from fake_atlassian import TOKEN
from kb_agent.engine import Engine
from kb_agent.governance.identity import UserContext
from kb_agent.governance.vault import Vault


def test_jira_fetch_renders_fields_links_and_comments(make_engine, server):
    result = make_engine().run_tool("jira_fetch", {"key": "PROJ-1"})
    assert result.status == "ok", result.error
    text = "\n".join(e.text for e in result.evidence)
    assert result.evidence[0].path == "jira/PROJ-1.md" and result.evidence[0].source == f"{server.url}/browse/PROJ-1"
    assert "# PROJ-1: Card payments fail on retry" in text and "Subtasks: PROJ-2" in text
    assert "Link: blocks PROJ-3" in text and "Fixed in 2.4 by idempotency keys." in text


def test_jira_cloud_bodies_and_token_paging(make_engine):
    engine = make_engine(jira_deployment="cloud")
    fetched = engine.run_tool("jira_fetch", {"key": "PROJ-2"})
    assert fetched.status == "ok" and "Subtask of the payment fix." in fetched.evidence[0].text + "\n".join(
        e.text for e in fetched.evidence
    )
    found = engine.run_tool("jira_search", {"jql": "project = PROJ", "max_results": 10})
    assert [e.path for e in found.evidence] == ["jira/PROJ-1.md", "jira/PROJ-2.md", "jira/PROJ-3.md"]


def test_jira_server_search_pages_with_start_at(make_engine, server):
    before = server.hits["/rest/api/2/search"]
    found = make_engine().run_tool("jira_search", {"jql": "project = PROJ ORDER BY key", "max_results": 10})
    assert [e.path for e in found.evidence] == ["jira/PROJ-1.md", "jira/PROJ-2.md", "jira/PROJ-3.md"]
    assert server.hits["/rest/api/2/search"] - before == 2  # pages of two


@pytest.mark.parametrize(
    ("key", "status", "message"),
    [
        ("SECRET-1", "denied", "403 forbidden"),
        ("NOPE-9", "error", "404 not found: Issue does not exist"),
        ("SLOW-1", "error", "429 rate limited; retry after 3600s"),
    ],
)
def test_jira_errors_are_clear(make_engine, key, status, message):
    result = make_engine().run_tool("jira_fetch", {"key": key})
    assert result.status == status and message in result.error


def test_jira_401_without_a_credential(make_engine):
    result = make_engine(store_token=False).run_tool("jira_fetch", {"key": "PROJ-1"})
    assert result.status == "denied" and "401 unauthorized" in result.error


def test_retry_after_is_honoured(make_engine):
    result = make_engine().run_tool("jira_fetch", {"key": "BUSY-1"})
    assert result.status == "ok" and "Finally answered" in result.evidence[0].text


def test_responses_are_cached_across_engines(make_engine, server):
    make_engine().run_tool("jira_fetch", {"key": "PROJ-3"})
    hits = server.hits["/rest/api/2/issue/PROJ-3"]
    again = make_engine().run_tool("jira_fetch", {"key": "PROJ-3"})
    assert again.status == "ok" and server.hits["/rest/api/2/issue/PROJ-3"] == hits


def test_the_secret_never_leaves_the_connector(make_engine, settings, tmp_path):
    engine = make_engine()
    write(tmp_path / "docs" / "a.md", "# A\nPROJ-1 is tracked in Jira.\n")
    engine.index([tmp_path / "docs"])
    results = [engine.run_tool("jira_fetch", {"key": k}) for k in ("PROJ-1", "SECRET-1", "NOPE-9")]
    engine.answer_query("What is the status of PROJ-1?")
    dumped = "".join(r.model_dump_json() for r in results)
    assert TOKEN not in dumped
    assert TOKEN not in (settings.data_folder / "audit" / "audit.jsonl").read_text()
    assert TOKEN not in (settings.data_folder / "vault.json").read_text()  # encrypted at rest
    assert TOKEN not in repr(engine.vault.get("jira")) and TOKEN not in f"{engine.vault.get('jira')}"


def test_connector_tools_are_hidden_until_configured(settings, embedder):
    engine = Engine(settings, embedder=embedder)
    try:
        names = set(engine.tools_for())
        assert "jira_fetch" not in names and "confluence_search" not in names and "web_fetch" in names
        assert "index_command" not in engine.tools_for(agent=True)  # the agent never writes
        assert engine.run_tool("jira_fetch", {"key": "PROJ-1"}).status == "denied"
    finally:
        engine.close()


def test_confluence_fetch_by_id_and_title_and_search_paging(make_engine):
    engine = make_engine()
    by_id = engine.run_tool("confluence_fetch", {"page_id": "101"})
    assert by_id.status == "ok" and by_id.evidence[0].path == "confluence/HR/101.md"
    assert "## Annual leave" in by_id.evidence[0].text and "25 days of paid leave" in by_id.evidence[0].text
    by_title = engine.run_tool("confluence_fetch", {"title": "Expenses", "space": "HR"})
    assert "Submit receipts within 30 days." in by_title.evidence[0].text
    assert engine.run_tool("confluence_fetch", {"page_id": "101", "title": "x"}).status == "error"
    assert "404 not found" in engine.run_tool("confluence_fetch", {"page_id": "999"}).error
    found = engine.run_tool("confluence_search", {"cql": "space = HR", "max_results": 10})
    assert [e.path for e in found.evidence] == ["confluence/HR/100.md", "confluence/HR/101.md", "confluence/HR/102.md"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1/x",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "http://localhost/",
    ],
)
def test_web_fetch_refuses_private_addresses_by_default(make_engine, url):
    result = make_engine().run_tool("web_fetch", {"url": url})
    assert result.status == "denied" and "non-public address" in result.error


def test_web_fetch_schema_refuses_other_schemes(make_engine):
    assert make_engine().run_tool("web_fetch", {"url": "file:///etc/passwd"}).status == "error"


def test_web_fetch_reads_main_content_follows_redirects_and_limits(make_engine, server):
    engine = make_engine(web_allowlist=["127.0.0.1"], web_max_bytes=1_000_000, tool_timeout_s=2)
    page = engine.run_tool("web_fetch", {"url": f"{server.url}/web/redirect"})
    assert page.status == "ok", page.error
    text = "\n".join(e.text for e in page.evidence)
    assert "# Leave policy" in text and "**25 days**" in text and "- Carry over up to 5 days." in text
    assert "Menu" not in text and "alert" not in text and "(c) corp" not in text
    assert page.evidence[0].source.endswith("/web/page.html")
    assert "larger than" in engine.run_tool("web_fetch", {"url": f"{server.url}/web/big"}).error
    assert "content type" in engine.run_tool("web_fetch", {"url": f"{server.url}/web/image.png"}).error
    slow = engine.run_tool("web_fetch", {"url": f"{server.url}/web/slow"})
    assert (slow.status == "error" and "timed out" in slow.error) or "no answer" in slow.error


def test_index_command_indexes_a_ticket_tree_with_the_callers_acl(make_engine, tmp_path):
    engine = make_engine()
    write(tmp_path / "docs" / "readme.md", "# Readme\nNothing about payments.\n")
    engine.index([tmp_path / "docs"])
    payments = UserContext(user_id="ada", groups=["payments"])
    result = engine.run_tool("index_command", {"target": "PROJ-1"}, user=payments)
    assert result.status == "ok" and len(result.evidence) == 3
    member = engine.run_tool("hybrid_search", {"query": "idempotency keys"}, user=payments)
    assert any(e.path.endswith("jira/PROJ-2.md") for e in member.evidence)
    outsider = engine.run_tool(
        "hybrid_search", {"query": "idempotency keys"}, user=UserContext(user_id="eve", groups=["sales"])
    )
    assert not any("jira/" in e.path for e in outsider.evidence)
    graph = engine.kb().graph().graph
    assert graph.has_edge("ticket:PROJ-1", "ticket:PROJ-2") and graph.has_edge("ticket:PROJ-1", "ticket:PROJ-3")
    related = engine.run_tool("graph_related", {"entity": "PROJ-1"}, user=payments)
    assert related.status == "ok"
    assert (
        engine.run_tool("graph_related", {"entity": "PROJ-1"}, user=UserContext(user_id="eve", groups=["sales"])).status
        == "error"
    )


def test_index_command_indexes_a_confluence_tree_with_parents(make_engine):
    engine = make_engine()
    result = engine.run_tool("index_command", {"target": "confluence:100"})
    assert result.status == "ok" and len(result.evidence) == 3
    graph = engine.kb().graph().graph
    assert graph.has_edge("file:public/confluence/HR/101.md", "page:100")
    answer = engine.run_tool("hybrid_search", {"query": "receipts within 30 days"})
    assert answer.evidence[0].path == "public/confluence/HR/102.md"


def test_index_command_refuses_callers_without_a_group(make_engine):
    result = make_engine().run_tool("index_command", {"target": "PROJ-1"}, user=UserContext(user_id="x", groups=[]))
    assert result.status == "denied" and "no group" in result.error


def test_the_secret_never_reaches_prompts_state_or_errors(make_engine, tmp_path, monkeypatch):
    from kb_agent.llm.scripted import ScriptedLLM

    llm = ScriptedLLM(lambda messages: "PROJ-1 is in progress [1].")
    engine = make_engine()
    write(tmp_path / "docs" / "a.md", "# A\nPROJ-1 is tracked in Jira.\n")
    engine.index([tmp_path / "docs"])
    engine._llms = type(engine.llms())(llm, llm, llm)
    answer = engine.answer_query("What is the status of PROJ-1?")
    assert any(call["name"] == "jira_fetch" and call["status"] == "ok" for call in answer.tool_calls)
    assert TOKEN not in json.dumps([m for p in llm.prompts for m in p]) and TOKEN not in answer.model_dump_json()
    monkeypatch.setenv("KB_AGENT_VAULT_KEY", Vault.generate_key())  # wrong key: a clear error, no secret
    failed = engine.run_tool("jira_fetch", {"key": "PROJ-9"})
    assert failed.status == "error" and "cannot be decrypted" in failed.error and TOKEN not in failed.error
