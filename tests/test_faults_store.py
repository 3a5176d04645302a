"""Damage, concurrency and a changing embedder: detected, repaired or reported, never silently wrong.

Readers never write store files; the dense store is kept per embedding model; a broken embedder or
vector store turns into keyword results with a notice, not an error or an empty answer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter

ALL = AccessFilter.unrestricted()


class OtherEmbedder(HashEmbedder):
    """Another model: its own id and dimension."""

    model_id = "test/other-64"

    def _vec(self, text: str) -> np.ndarray:
        return super()._vec(text)[:64] + 1e-3


class BrokenEmbedder(HashEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        raise ConnectionError("embedding endpoint unreachable")


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    write(root / "auth.md", "# Auth\nAccess tokens expire after thirty minutes.\n")
    write(root / "cache.md", "# Cache\nResponses are cached by content hash.\n")
    return root


def _indexed(settings, docs, embedder) -> Engine:
    engine = Engine(settings, embedder=embedder)
    engine.index([docs])
    engine.embed()
    return engine


def _paths(response) -> list[str]:
    return [h.path for h in response.hits]


def test_switching_the_embedder_keeps_each_models_vectors(settings, docs):
    first = HashEmbedder()
    engine = _indexed(settings, docs, first)
    before = _paths(engine.search("tokens expire", access=ALL, mode="dense"))
    engine.close()
    other = Engine(settings, embedder=OtherEmbedder())  # a new model: no vector of its own yet
    response = other.search("tokens expire", access=ALL, mode="hybrid")
    assert _paths(response)[0] == "docs/auth.md"  # BM25 carries it; no AssertionError on 256 vs 64 dims
    assert any("no chunk is embedded yet" in n for n in response.notices)
    other.embed()
    assert other.search("tokens expire", access=ALL, mode="dense").hits
    other.close()
    again = HashEmbedder()
    back = Engine(settings, embedder=again)
    assert _paths(back.search("tokens expire", access=ALL, mode="dense")) == before
    assert back.embed()["embedded"] == 0 and again.passages_embedded == 0  # its vectors were kept
    back.close()


def test_a_failing_embedder_falls_back_to_keywords_with_a_notice(settings, docs):
    _indexed(settings, docs, HashEmbedder()).close()
    engine = Engine(settings, embedder=BrokenEmbedder())
    for mode in ("hybrid", "dense"):
        response = engine.search("tokens expire", mode=mode)
        assert _paths(response)[0] == "docs/auth.md"
        assert any("dense search failed (ConnectionError" in n and "keyword (BM25)" in n for n in response.notices)
    answer = engine.answer_query("When do access tokens expire?")
    assert not answer.refused and "docs/auth.md" in answer.answer
    engine.close()


def test_searchers_never_write_store_files(settings, docs):
    writer = _indexed(settings, docs, HashEmbedder())
    dense = writer.kb().folder / "dense"
    before = {p: p.stat().st_mtime_ns for p in dense.rglob("*")}
    readers = [Engine(settings, embedder=HashEmbedder()) for _ in range(3)]
    write(docs / "new.md", "# New\nTokens can be revoked.\n")
    writer.index([docs])  # the catalog moves on; the readers catch up in memory
    after_index = {p: p.stat().st_mtime_ns for p in dense.rglob("*")}
    assert after_index != before  # the writer saved
    errors: list[BaseException] = []

    def search(engine: Engine) -> None:
        try:
            for _ in range(5):
                assert engine.search("tokens", access=ALL, mode="hybrid").hits
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=search, args=(r,)) for r in readers for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert {p: p.stat().st_mtime_ns for p in dense.rglob("*")} == after_index  # no reader wrote
    assert not list(dense.rglob("*.tmp"))
    for engine in (writer, *readers):
        engine.close()


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_damaged_vector_file_is_rebuilt_not_trusted(settings, docs, damage, caplog):
    engine = _indexed(settings, docs, HashEmbedder())
    expected = _paths(engine.search("content hash", access=ALL, mode="dense"))
    store = next((engine.kb().folder / "dense").rglob("store.npz"))
    engine.close()
    data = bytearray(store.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 3]
    else:
        data = bytearray(b"not a zip at all")
    store.write_bytes(bytes(data))
    reader = Engine(settings, embedder=HashEmbedder())
    with caplog.at_level("WARNING", logger="kb_agent.store"):
        assert _paths(reader.search("content hash", access=ALL, mode="dense")) == expected
    assert "rebuilt from the embedding cache" in caplog.text
    assert store.read_bytes() == bytes(data)  # a reader does not write; the next writer repairs
    reader.index([docs])
    assert reader.kb().vectors.damaged is None
    from kb_agent.store.vectors import FaissFlatStore

    assert FaissFlatStore(store.parent).damaged is None  # saved whole again
    reader.close()


def test_a_failing_retriever_is_an_error_not_a_refusal(settings, docs, monkeypatch):
    from fastapi.testclient import TestClient

    from kb_agent.governance.errors import Unavailable
    from kb_agent.interfaces.auth import Authenticator
    from kb_agent.interfaces.server import create_app
    from kb_agent.retrieval.searcher import Searcher

    engine = _indexed(settings, docs, HashEmbedder())

    def broken(self, *args, **kwargs):
        raise RuntimeError("tantivy index is corrupt")

    monkeypatch.setattr(Searcher, "search", broken)
    with pytest.raises(Unavailable, match=r"search failed.*tantivy index is corrupt"):
        engine.answer_query("When do access tokens expire?")
    app = create_app(engine, Authenticator(None, None, allow_anonymous=True))
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/query", json={"question": "When do access tokens expire?"})
    assert response.status_code == 503 and "search failed" in response.json()["error"]["message"]
    engine.close()
