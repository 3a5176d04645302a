"""The HTTP API through FastAPI's test client: auth, ACL-scoped answers and sources, SSE events, the
OpenAI-compatible endpoint, error bodies, metrics."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from fastapi.testclient import TestClient

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator, hash_key
from kb_agent.interfaces.server import create_app

POLICY = """\
users:
  alice: {groups: [hr]}
  bob: {groups: [eng]}
groups:
  hr: {tools: ["*"], rate_limit_per_min: 100}
  eng: {tools: [hybrid_search, read_file], knowledge_bases: [default], rate_limit_per_min: 100}
"""


@pytest.fixture
def client(settings, tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe office opens at nine.\nLunch is at noon.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nSalary reviews happen in March.\n")
    (tmp_path / "policy.yaml").write_text(POLICY)
    keys = tmp_path / "keys.yaml"
    keys.write_text(
        f"keys:\n  - {{key: '{hash_key('alice-key')}', user: alice, admin: true}}\n  - {{key: bob-key, user: bob}}\n"
    )
    engine = Engine(settings.model_copy(update={"policy_file": tmp_path / "policy.yaml"}), embedder=HashEmbedder())
    engine.index([root])
    app = create_app(engine, Authenticator(keys, SECRET), max_body_bytes=5000)
    with TestClient(app) as test_client:
        yield test_client
    engine.close()


SECRET = "jwt-secret-for-tests-0123456789abcdef"
ALICE = {"Authorization": "Bearer alice-key"}
BOB = {"X-API-Key": "bob-key"}


def test_auth_is_required_and_errors_are_clear(client):
    assert client.get("/healthz").status_code == 200
    missing = client.post("/v1/query", json={"question": "When does the office open?"})
    assert missing.status_code == 401 and "missing credentials" in missing.json()["error"]["message"]
    wrong = client.post("/v1/query", json={"question": "x"}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "invalid API key"
    big = client.post(
        "/v1/query", content=json.dumps({"question": "x" * 6000}), headers={**BOB, "Content-Type": "application/json"}
    )
    assert big.status_code == 413


def test_jwt_maps_to_the_policy_user(client):
    token = jwt.encode({"sub": "alice", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    ok = client.post(
        "/v1/search", json={"query": "salary reviews", "mode": "bm25"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert ok.status_code == 200 and ok.json()["results"][0]["path"] == "corp/hr/pay.md"
    expired = jwt.encode({"sub": "alice", "exp": int(time.time()) - 5}, SECRET, algorithm="HS256")
    assert (
        client.post("/v1/search", json={"query": "x"}, headers={"Authorization": f"Bearer {expired}"}).json()["error"][
            "message"
        ]
        == "the token has expired"
    )


def test_answers_and_sources_follow_the_acl(client):
    alice = client.post("/v1/query", json={"question": "When are salary reviews?"}, headers=ALICE).json()
    assert alice["citations"] and alice["citations"][0]["path"] == "corp/hr/pay.md"
    bob = client.post("/v1/query", json={"question": "When are salary reviews?"}, headers=BOB).json()
    assert all(c["path"] != "corp/hr/pay.md" for c in bob["citations"])
    preview = client.get("/v1/sources", params={"path": "corp/handbook.md", "start": 2, "end": 3}, headers=BOB)
    assert preview.json() == {
        "path": "corp/handbook.md",
        "start_line": 2,
        "end_line": 3,
        "text": "The office opens at nine.\nLunch is at noon.",
    }
    hidden = client.get("/v1/sources", params={"path": "corp/hr/pay.md"}, headers=BOB)
    assert hidden.status_code == 404 and "Salary" not in hidden.text
    traversal = client.get("/v1/sources", params={"path": "../../etc/passwd"}, headers=BOB)
    assert traversal.status_code == 403


def test_policy_denials_are_403(client):
    denied = client.post("/v1/search", json={"query": "x", "kbs": ["secret-kb"]}, headers=BOB)
    assert denied.status_code == 403 and "may not use knowledge base" in denied.json()["error"]["message"]
    assert client.post("/v1/index", json={"paths": ["/tmp"]}, headers=BOB).status_code == 403


def test_stream_sends_node_events_citations_and_final(client):
    with client.stream(
        "POST", "/v1/query/stream", json={"question": "When does the office open?"}, headers=BOB
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        body = "".join(response.iter_text())
    events = [block.split("\n")[0].removeprefix("event: ") for block in body.strip().split("\n\n")]
    assert events[0] == "node_start" and "tool" in events and events[-2:] == ["citations", "final"]
    final = json.loads(body.strip().split("\n\n")[-1].split("data: ", 1)[1])
    assert final["citations"][0]["path"] == "corp/handbook.md"


def test_openai_compatible_chat_completions(client):
    request = {"model": "kb-agent", "messages": [{"role": "user", "content": "When does the office open?"}]}
    plain = client.post("/v1/chat/completions", json=request, headers=BOB).json()
    assert plain["object"] == "chat.completion" and "nine" in plain["choices"][0]["message"]["content"]
    assert plain["citations"][0]["path"] == "corp/handbook.md"
    with client.stream("POST", "/v1/chat/completions", json={**request, "stream": True}, headers=BOB) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert "nine" in text and chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["citations"]


def test_openai_python_client_talks_to_it(client):
    from openai import OpenAI

    openai_client = OpenAI(base_url="http://testserver/v1", api_key="bob-key", http_client=client)
    reply = openai_client.chat.completions.create(
        model="kb-agent", messages=[{"role": "user", "content": "When is lunch?"}]
    )
    assert "noon" in reply.choices[0].message.content


def test_metrics_count_requests(client):
    client.post("/v1/search", json={"query": "office"}, headers=BOB)
    metrics = client.get("/metrics").text
    assert 'kb_agent_requests_total{route="/v1/search",status="200"}' in metrics


def test_rate_limit_is_429(settings, tmp_path):
    write(tmp_path / "kb" / "a.md", "# A\nThe office opens at nine.\n")
    (tmp_path / "policy.yaml").write_text(
        "users:\n  bob: {groups: [eng]}\ngroups:\n  eng: {tools: ['*'], rate_limit_per_min: 2}\n"
    )
    (tmp_path / "keys.yaml").write_text("keys:\n  - {key: bob-key, user: bob}\n")
    engine = Engine(settings.model_copy(update={"policy_file": tmp_path / "policy.yaml"}), embedder=HashEmbedder())
    engine.index([tmp_path / "kb"])
    with TestClient(create_app(engine, Authenticator(tmp_path / "keys.yaml", None))) as test_client:
        codes = [test_client.post("/v1/search", json={"query": "office"}, headers=BOB).status_code for _ in range(3)]
        limited = test_client.post("/v1/search", json={"query": "office"}, headers=BOB).json()
    engine.close()
    assert codes == [200, 200, 429] and "rate limit reached" in limited["error"]["message"]
