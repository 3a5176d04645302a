"""One request pipeline: every entry point goes through the gate's Request (decision, audit, budget,
outbound filter), and the same failure gets the same status and exit code everywhere."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from conftest import HashEmbedder, write
from kb_agent.config import get_settings
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.errors import LimitExceeded
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.cli import app as cli_app
from kb_agent.interfaces.http_guard import LOOPBACK_HOSTS
from kb_agent.interfaces.server import create_app
from kb_agent.llm.scripted import ScriptedLLM
from test_agent_graph import ByRole, route

CARD = "4111 1111 1111 1111"
SECRET = "jwt-secret-for-tests-0123456789abcdef"
POLICY = """\
users:
  alice: {groups: [hr, staff], tenant: other}
  hank: {groups: [hr, staff], tenant: acme}
  bob: {groups: [staff]}
  root: {groups: [staff], admin: true}
groups:
  hr: {tools: ["*"], knowledge_bases: ["*"], when: {tenant: acme}}
  staff: {tools: [hybrid_search, grep_search, vector_search, read_file], knowledge_bases: [default],
          token_budget_per_day: 100000}
"""


@pytest.fixture
def corp(tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", f"# Handbook\nThe office opens at nine. The corporate card is {CARD}.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nThe zebracorn salary band is 90k.\n")
    return root


def make_engine(settings, tmp_path, corp, *, llm=None, policy=POLICY, **overrides):
    (tmp_path / "policy.yaml").write_text(policy)
    engine = Engine(
        settings.model_copy(update={"policy_file": tmp_path / "policy.yaml", **overrides}),
        embedder=HashEmbedder(),
        llm=llm,
    )
    engine.index([corp])
    engine.embed()
    return engine


@pytest.fixture
def governed(settings, tmp_path, corp):
    engine = make_engine(settings, tmp_path, corp)
    yield engine
    engine.close()


# -- 2. policy ---------------------------------------------------------------------------------------
@pytest.mark.ripgrep
def test_a_group_whose_when_fails_gives_no_acl_groups(governed):
    alice, hank = governed.identify("alice"), governed.identify("hank")  # both in hr; only hank is tenant acme
    for mode in ("bm25", "grep", "dense", "hybrid"):
        assert all("hr/" not in h.path for h in governed.search("zebracorn salary", user=alice, mode=mode).hits)
        assert any("hr/" in h.path for h in governed.search("zebracorn salary", user=hank, mode=mode).hits), mode
    assert governed.run_tool("read_file", {"path": "corp/hr/pay.md"}, user=alice).status == "error"
    assert "zebracorn" not in governed.answer_query("What is the zebracorn salary band?", user=alice).answer


def test_a_token_claim_grants_admin_only_when_the_policy_trusts_claims(settings, tmp_path, corp):
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - {key: bob-key, user: bob}\n  - {key: ops-key, user: bob, admin: true}\n")
    forged = jwt.encode({"sub": "bob", "admin": True, "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    root_token = jwt.encode({"sub": "root", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    body = {"paths": [str(corp)]}
    for policy, expected in ((POLICY, 403), (POLICY + "trust_token_claims: true\n", 200)):
        engine = make_engine(settings, tmp_path, corp, policy=policy)
        with TestClient(create_app(engine, Authenticator(keys, SECRET))) as client:
            claim = client.post("/v1/index", json=body, headers={"Authorization": f"Bearer {forged}"})
            assert claim.status_code == expected, claim.text
            assert client.post("/v1/index", json=body, headers={"X-API-Key": "bob-key"}).status_code == 403
            assert client.post("/v1/index", json=body, headers={"X-API-Key": "ops-key"}).status_code == 200
            policy_admin = client.post("/v1/index", json=body, headers={"Authorization": f"Bearer {root_token}"})
            assert policy_admin.status_code == 200
        engine.close()


# -- 3. one request pipeline -------------------------------------------------------------------------
def test_streamed_tokens_are_masked_even_when_a_card_is_split(settings, tmp_path, corp):
    script = ByRole(route=route(), synth=f"The corporate card is {CARD} [1].")
    engine = make_engine(settings, tmp_path, corp, llm=ScriptedLLM(script))
    events = list(engine.stream("What is the corporate card?", user=engine.identify("bob")))
    streamed = "".join(e["text"] for e in events if e["type"] == "token")
    final = next(e for e in events if e["type"] == "final")["answer"]
    assert "[CARD]" in streamed and CARD not in streamed and "1111 1111" not in streamed
    assert CARD not in final.answer and CARD not in json.dumps([c.snippet for c in final.citations])
    with TestClient(create_app(engine, Authenticator(None, SECRET))) as client:
        token = jwt.encode({"sub": "bob", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
        request = {"messages": [{"role": "user", "content": "What is the corporate card?"}], "stream": True}
        with client.stream(
            "POST", "/v1/chat/completions", json=request, headers={"Authorization": f"Bearer {token}"}
        ) as response:
            text = "".join(response.iter_text())
        assert CARD not in text and "[CARD]" in text
        with client.stream(
            "POST",
            "/v1/query/stream",
            json={"question": "What is the corporate card?"},
            headers={"Authorization": f"Bearer {token}"},
        ) as response:
            assert CARD not in "".join(response.iter_text())
    engine.close()


def test_tools_mode_writes_tool_call_records(settings, tmp_path, corp):
    replies = [
        json.dumps({"tool": "search_knowledge", "args": {"query": "office opens"}}),
        json.dumps({"answer": "The office opens at nine [R1]."}),
    ]
    engine = make_engine(settings, tmp_path, corp, llm=ScriptedLLM(replies), mode="tools")
    answer = engine.answer_query("When does the office open?", user=engine.identify("bob"))
    calls = engine.audit.records("tool_call", trace_id=answer.trace_id)
    assert [c["tool"] for c in calls] == ["hybrid_search"] and calls[0]["status"] == "ok"
    engine.close()


def test_chat_mode_is_budgeted_audited_and_masked(settings, tmp_path, corp):
    engine = make_engine(settings, tmp_path, corp, llm=ScriptedLLM(lambda m: f"Sure: {CARD} " + "word " * 40))
    bob = engine.identify("bob")
    reply = engine.chat("say something", user=bob)
    assert CARD not in reply and "[CARD]" in reply
    assert engine.gate.budgets.used_today("bob") > 0
    events = [r["event"] for r in engine.audit.records() if r.get("event") in ("chat", "llm_call", "masked")]
    assert {"chat", "llm_call", "masked"} <= set(events)
    engine.gate.budgets.add("bob", 200000)
    with pytest.raises(LimitExceeded):
        engine.chat("again", user=bob)
    with TestClient(create_app(engine, Authenticator(None, SECRET))) as client:
        token = jwt.encode({"sub": "bob", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
        refused = client.post(
            "/v1/chat/completions",
            headers={"Authorization": f"Bearer {token}"},
            json={"messages": [{"role": "user", "content": "hi"}], "kb_mode": False},
        )
        assert refused.status_code == 429
    engine.close()


def test_index_writes_an_audit_record(governed, corp):
    governed.index([corp])
    record = governed.audit.records("index")[-1]
    assert record["kb"] == "default" and record["unchanged"] >= 2


def test_a_denial_is_403_on_every_http_path_and_exit_3_on_every_command(governed, tmp_path, monkeypatch):
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - {key: bob-key, user: bob}\n")
    with TestClient(create_app(governed, Authenticator(keys, None))) as client:
        headers = {"X-API-Key": "bob-key"}
        denied = {"question": "x", "kbs": ["hr-secret"]}
        assert client.post("/v1/query", json=denied, headers=headers).status_code == 403
        stream = client.post("/v1/query/stream", json=denied, headers=headers)
        assert stream.status_code == 403 and stream.json()["error"]["code"] == 403
        assert client.post("/v1/search", json={"query": "x", "kbs": ["hr-secret"]}, headers=headers).status_code == 403
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(governed.settings.data_folder))
    monkeypatch.setenv("KB_AGENT_POLICY_FILE", str(governed.settings.policy_file))
    monkeypatch.setenv("KB_AGENT_LLM_PROVIDER", "none")
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        for command in (
            ["ask", "x", "--kb", "hr-secret", "--as", "bob"],
            ["search", "x", "--kb", "hr-secret", "--as", "bob"],
            ["tools", "run", "hybrid_search", "--args", '{"query": "x"}', "--kb", "hr-secret", "--as", "bob"],
        ):
            result = runner.invoke(cli_app, command)
            assert result.exit_code == 3 and "denied" in result.output, (command, result.output)
        bad = runner.invoke(cli_app, ["ask", "   ", "--as", "bob"])
        assert bad.exit_code == 2
    finally:
        get_settings.cache_clear()


def test_an_internal_error_is_500_without_a_traceback(governed, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("store exploded near boss@corp.example")

    monkeypatch.setattr(governed, "searcher", boom)
    token = jwt.encode({"sub": "bob", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    with TestClient(create_app(governed, Authenticator(None, SECRET))) as client:
        response = client.post("/v1/search", json={"query": "office"}, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "internal error (RuntimeError)" in message and "Traceback" not in message and "boss@" not in message


# -- 4. network exposure -----------------------------------------------------------------------------
def test_without_auth_only_loopback_host_headers_are_answered(settings, corp):
    engine = Engine(settings, embedder=HashEmbedder())  # no policy: --no-auth serves the local owner
    engine.index([corp])
    app = create_app(engine, Authenticator(None, None, allow_anonymous=True), allowed_hosts=LOOPBACK_HOSTS)
    with TestClient(app) as client:
        rebound = client.post("/v1/search", json={"query": "office"}, headers={"Host": "evil.example:8765"})
        assert rebound.status_code == 403 and "loopback" in rebound.json()["error"]["message"]
        assert (
            client.post("/v1/search", json={"query": "office"}, headers={"Host": "localhost:8765"}).status_code == 200
        )
        assert client.get("/healthz", headers={"Host": "[::1]:8765"}).status_code == 200
    engine.close()


def test_chunked_bodies_count_towards_the_limit(governed):
    app = create_app(governed, Authenticator(None, SECRET), max_body_bytes=5000)
    token = jwt.encode({"sub": "bob", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")

    def chunks():
        yield b'{"query": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    with TestClient(app) as client:
        response = client.post(
            "/v1/search",
            content=chunks(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 413 and "larger than" in response.json()["error"]["message"]


def test_mcp_over_http_authenticates_every_request_and_runs_as_the_caller(governed, tmp_path):
    import anyio
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from kb_agent.interfaces.mcp_server import http_app

    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - {key: hank-key, user: hank}\n  - {key: alice-key, user: alice}\n")

    def app():  # the SDK's session manager starts once per app: one app per server below
        return http_app(
            governed,
            Authenticator(keys, None),
            None,
            fallback=governed.identify("bob"),
            max_body_bytes=100_000,
            allowed_hosts=None,
        )

    with TestClient(app()) as client:
        missing = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
        assert missing.status_code == 401
        wrong = client.post("/mcp", json={}, headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401

    import socket
    import threading

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:

        async def paths_for(key: str) -> set[str]:
            http = create_mcp_http_client(headers={"X-API-Key": key})
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as mcp:
                result = await mcp.call_tool("search_knowledge", {"query": "zebracorn salary band"})
                payload = result.structured_content
                hits = payload.get("result", payload) if isinstance(payload, dict) else payload
                return {hit["path"] for hit in hits}

        assert "corp/hr/pay.md" in anyio.run(paths_for, "hank-key")
        assert "corp/hr/pay.md" not in anyio.run(paths_for, "alice-key")
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_mcp_http_refuses_a_public_bind_without_auth(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(tmp_path / "data"))
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli_app, ["mcp", "--transport", "http", "--host", "0.0.0.0"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2 and "loopback" in result.output


def test_the_internal_search_path_is_not_an_entry_point(governed):
    """`access=` skips the gate: only evaluation and tests use it, never an interface (test_layers.py)."""
    hits = governed.search("zebracorn", access=AccessFilter.for_groups(["hr"]), mode="bm25").hits
    assert hits and not governed.audit.records("search")


def test_a_denied_turn_does_not_end_a_chat_session(governed, monkeypatch):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(governed.settings.data_folder))
    monkeypatch.setenv("KB_AGENT_POLICY_FILE", str(governed.settings.policy_file))
    monkeypatch.setenv("KB_AGENT_LLM_PROVIDER", "none")
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(
            cli_app, ["chat", "--kb", "hr-secret", "--as", "bob"], input="first question\nsecond question\n/quit\n"
        )
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0 and result.output.count("may not use knowledge base") == 2
