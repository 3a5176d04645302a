"""The OpenAI-compatible embeddings client against a local HTTP server shaped like the real API."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import numpy as np
import pytest

from kb_agent.config import Settings
from kb_agent.llm.embeddings import EmbeddingError, OpenAIEmbedder, embedder_model_id, get_embedder


class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[list[int]] = []
    seen: ClassVar[list[dict]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status = _Handler.script.pop(0) if _Handler.script else 200
        if status != 200:
            payload = {"error": {"message": "nope", "type": "invalid_request_error"}}
        else:  # answer out of order: the client must sort by index
            data = [
                {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                for i, t in enumerate(body["input"])
            ]
            payload = {"object": "list", "data": list(reversed(data)), "model": body["model"]}
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.script, _Handler.seen = [], []
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()


def test_embeds_in_order_normalized_with_auth(server):
    client = OpenAIEmbedder(server, "text-embed", "sk-test")
    vectors = client.embed_passages(["a", "abcd"])
    assert vectors.shape == (2, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1][0] > vectors[0][0]  # order restored from "index"
    assert _Handler.seen[0]["path"] == "/v1/embeddings" and _Handler.seen[0]["auth"] == "Bearer sk-test"
    assert _Handler.seen[0]["body"] == {"model": "text-embed", "input": ["a", "abcd"]}


def test_retries_server_errors_then_succeeds(server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda _s: None)
    _Handler.script = [503, 200]
    assert OpenAIEmbedder(server, "m", None).embed_query("x").shape == (3,)


def test_client_errors_are_clear_and_not_retried(server):
    _Handler.script = [401]
    with pytest.raises(EmbeddingError, match="401"):
        OpenAIEmbedder(server, "m", "bad").embed_query("x")
    assert len(_Handler.seen) == 1


def test_unreachable_endpoint(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda _s: None)
    with pytest.raises(EmbeddingError, match="cannot reach"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", None, timeout=1, retries=2).embed_query("x")


def test_settings_select_the_endpoint(server, tmp_path):
    settings = Settings(data_folder=tmp_path, embedding_url=server, embedding_model="m", _env_file=None)
    assert isinstance(get_embedder(settings), OpenAIEmbedder)
    assert embedder_model_id(settings) == get_embedder(settings).model_id
    with pytest.raises(EmbeddingError, match="KB_AGENT_EMBEDDING_MODEL"):
        get_embedder(Settings(data_folder=tmp_path, embedding_url=server, _env_file=None))
