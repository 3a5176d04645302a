"""The HTTP surface under malformed requests and overload: every bad input is a 4xx with the documented
{"error": {"code", "message"}} body, never a 500; an overload is shed with 503/429 and Retry-After."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.server import create_app

MALFORMED = [
    ("POST", "/v1/query", '{"question": "   "}', 400),
    ("POST", "/v1/query", '{"question": "\\ud800"}', 422),  # a lone surrogate
    ("POST", "/v1/query", '{"question": 5}', 422),
    ("POST", "/v1/query", "not json", 422),
    ("POST", "/v1/query", '{"question": "x", "history": "nope"}', 422),
    ("POST", "/v1/search", '{"query": "tokens", "k": NaN}', 422),
    ("POST", "/v1/search", '{"query": "tokens", "k": Infinity}', 422),
    ("POST", "/v1/search", '{"query": "tokens", "k": -1}', 422),
    ("POST", "/v1/search", '{"query": "   "}', 400),
    ("POST", "/v1/search", '{"query": "tokens", "mode": "sql"}', 422),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}', 422),
    ("POST", "/v1/chat/completions", '{"messages": []}', 422),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": "assistant", "content": "hi"}]}', 400),
    ("POST", "/v1/index", '{"paths": ["/nonexistent/folder"]}', 404),
    ("POST", "/v1/index", '{"paths": []}', 422),
    ("GET", "/v1/sources", None, 422),  # path missing
    ("GET", "/no/such/route", None, 404),
    ("DELETE", "/v1/query", None, 405),
]


@pytest.fixture
def engine(settings, tmp_path):
    write(tmp_path / "docs" / "auth.md", "# Auth\nAccess tokens last 30 minutes.\n")
    eng = Engine(settings.model_copy(update={"llm_provider": "none"}), embedder=HashEmbedder())
    eng.index([tmp_path / "docs"])
    yield eng
    eng.close()


@pytest.mark.parametrize(("method", "path", "body", "status"), MALFORMED)
def test_malformed_requests_get_a_4xx_with_the_error_body(engine, method, path, body, status):
    app = create_app(engine, Authenticator(None, None, allow_anonymous=True))
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and isinstance(error["message"], str) and error["message"]


def _blocked(engine, monkeypatch):
    """answer_query blocks until released: a request in progress for as long as the test wants."""
    entered, release = threading.Event(), threading.Event()
    real = engine.answer_query

    def slow(*args, **kwargs):
        entered.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "answer_query", slow)
    return entered, release


def _keys(tmp_path):
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - {key: a-key, user: a}\n  - {key: b-key, user: b}\n")
    return Authenticator(keys, None)


def _in_background(client, headers):
    out = {}
    thread = threading.Thread(
        target=lambda: out.setdefault("r", client.post("/v1/query", json={"question": "tokens?"}, headers=headers))
    )
    thread.start()
    return thread, out


@pytest.mark.parametrize(("in_flight", "per_client", "second_key", "shed"), [
    (1, 8, "b-key", 503),  # the server is full: anyone is turned away
    (8, 1, "a-key", 429),  # this client already has its one request in progress
    (8, 1, "b-key", None),  # control: another client is served
    (2, 8, "b-key", None),  # control: room for two
])  # fmt: skip
def test_overload_is_shed_with_retry_after(engine, tmp_path, monkeypatch, in_flight, per_client, second_key, shed):
    entered, release = _blocked(engine, monkeypatch)
    app = create_app(engine, _keys(tmp_path), max_in_flight=in_flight, max_per_client=per_client)
    with TestClient(app, raise_server_exceptions=False) as client:
        thread, first = _in_background(client, {"X-API-Key": "a-key"})
        assert entered.wait(30)
        if shed is None:
            second, out = _in_background(client, {"X-API-Key": second_key})
            release.set()
            second.join(30)
            response = out["r"]
        else:
            response = client.post("/v1/query", json={"question": "tokens?"}, headers={"X-API-Key": second_key})
            assert client.get("/healthz").status_code == 200  # health stays answerable under overload
            release.set()
        thread.join(30)
    assert first["r"].status_code == 200
    if shed is None:
        assert response.status_code == 200
    else:
        assert response.status_code == shed and response.headers["Retry-After"] == "1"
        assert response.json()["error"]["code"] == shed
