"""What only the PostgreSQL backend has: row-level security behind the query's ACL condition (with the
control that shows the leak without both), migration without re-embedding, a locked-down embedded server."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from conftest import store_settings, write
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter

pytestmark = pytest.mark.usefixtures("pg_url")
OUTSIDER = AccessFilter.for_groups(["eng"])


@pytest.fixture
def pg_engine(pg_url, tmp_path, embedder):
    engine = Engine(store_settings("postgres", tmp_path / "data", pg_url), embedder=embedder)
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe vacation policy grants 25 days.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "salaries.md", "# Salaries\nThe zebracorn salary band for staff engineers is secret.\n")
    engine.index([root])
    engine.embed()
    yield engine
    engine.close()


def _store_paths(engine, access) -> set[str]:
    """What the store itself returns (below the searcher's own re-check of every hit)."""
    kb = engine.kb()
    ids = [i for i, _ in kb.lexical.search("zebracorn salary", 10, access)]
    ids += [i for i, _ in kb.vectors.search(engine.embedder().embed_query("zebracorn salary"), 10, access)]
    return {stored.chunk.path for stored in kb.catalog.get_chunks(ids).values()}


def _no_acl_condition(monkeypatch):
    for module in ("lexical", "vectors"):
        monkeypatch.setattr(f"kb_agent.store.postgres.{module}.acl_condition", lambda access: ("", []))


def test_row_level_security_holds_without_the_query_condition(pg_engine, monkeypatch):
    assert "corp/hr/salaries.md" in _store_paths(pg_engine, AccessFilter.for_groups(["hr"]))
    _no_acl_condition(monkeypatch)  # a query that forgot its ACL condition
    assert "corp/hr/salaries.md" not in _store_paths(pg_engine, OUTSIDER)
    assert "corp/hr/salaries.md" in _store_paths(pg_engine, AccessFilter.for_groups(["hr"]))


def test_control_without_either_guard_the_restricted_chunk_leaks(pg_engine, monkeypatch):
    from kb_agent.store.postgres import db

    _no_acl_condition(monkeypatch)
    declare = db._declare
    monkeypatch.setattr(db, "_declare", lambda conn, access: declare(conn, None))  # every reader unrestricted
    assert "corp/hr/salaries.md" in _store_paths(pg_engine, OUTSIDER)


def test_a_transaction_that_declares_no_scope_sees_no_restricted_row(pg_engine, pg_url):
    import psycopg

    with psycopg.connect(pg_url) as conn:
        kb = pg_engine.settings.default_kb
        paths = {r[0] for r in conn.execute("SELECT path FROM kb_chunks WHERE kb=%s", (kb,))}
    assert paths == {"corp/handbook.md"}


def test_migrate_moves_vectors_without_embedding_again(tmp_path, pg_url, embedder):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe vacation policy grants 25 days.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "salaries.md", "# Salaries\nThe salary band for staff engineers.\n")
    settings = store_settings("embedded", tmp_path / "data").model_copy(update={"database_url": SecretStr(pg_url)})
    source = Engine(settings, embedder=embedder)
    source.index([root], kb="moved")
    source.embed("moved")
    embedded_before = embedder.passages_embedded
    report = source.migrate("moved", to="postgres")  # the target's database comes from the URL below
    source.close()
    assert report["files"] == 2 and report["chunks"] == 2 and report["vectors"] == 2

    target_settings = store_settings("postgres", tmp_path / "data", pg_url).model_copy(update={"default_kb": "moved"})
    target = Engine(target_settings, embedder=embedder)
    try:
        for mode in ("bm25", "dense", "hybrid"):
            hits = target.search("salary band", access=AccessFilter.for_groups(["hr"]), mode=mode, k=2).hits
            assert hits[0].path == "corp/hr/salaries.md", mode
            outsiders = target.search("salary band", access=OUTSIDER, mode=mode, k=5).hits
            assert "corp/hr/salaries.md" not in [h.path for h in outsiders], mode
        assert target.kb().embed_progress().coverage == 1.0
        assert embedder.passages_embedded == embedded_before  # nothing embedded a second time
        with pytest.raises(ValueError, match="--replace"):
            Engine(settings, embedder=embedder).migrate("moved")
    finally:
        target.close()


def test_embedded_server_listens_on_loopback_with_a_password(pg_url):
    import psycopg

    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
        role = "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        assert conn.execute(role).fetchone() == (False, False)  # row-level security applies to kb-agent's role
        assert conn.execute("SHOW password_encryption").fetchone()[0] == "scram-sha-256"
    without_password = pg_url.split("@")[1]
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://kb_agent:wrong@{without_password}", connect_timeout=5).close()


def test_store_health_reports_reachability(pg_url, tmp_path):
    from kb_agent.store.backends import store_health

    up = store_health(store_settings("postgres", tmp_path / "data", pg_url))
    assert up["store"] == "postgres" and up["reachable"] is True and up["pgvector"]
    down_url = pg_url.rsplit(":", 1)[0] + ":1/kb_agent"
    down = store_health(store_settings("postgres", tmp_path / "data", down_url))
    assert down["reachable"] is False and "does not answer" in down["error"] and "password" not in down["error"]
