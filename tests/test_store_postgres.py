"""What only the PostgreSQL backend has: row-level security behind the query's ACL condition (with the
control that shows the leak without both), migration without re-embedding, a locked-down embedded server."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from conftest import store_settings, write
from kb_agent.config import Settings
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
        graph = target.kb().graph()  # the graph came along, in step with the moved catalog
        assert set(graph.files) == {"corp/handbook.md", "corp/hr/salaries.md"}
        assert graph.generation == target.kb().catalog.generation
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


def test_healthz_reports_the_store_and_503_when_it_does_not_answer(pg_url, tmp_path, embedder):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from kb_agent.interfaces.auth import Authenticator
    from kb_agent.interfaces.server import create_app

    engine = Engine(store_settings("postgres", tmp_path / "data", pg_url), embedder=embedder)
    client = TestClient(create_app(engine, Authenticator(None, None, allow_anonymous=True)))
    body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["store"]["store"] == "postgres" and body["store"]["row_level_security"]
    down = pg_url.rsplit(":", 1)[0] + ":1/kb_agent"
    engine.settings = engine.settings.model_copy(update={"database_url": SecretStr(down)})
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["store"] == {"store": "postgres", "reachable": False}
    engine.close()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow  # starts real server processes
def test_serve_workers_share_the_postgres_store(pg_url, tmp_path):
    import os
    import subprocess
    import sys
    import time

    import httpx

    pytest.importorskip("uvicorn")
    settings = store_settings("postgres", tmp_path / "data", pg_url)
    write(tmp_path / "docs" / "a.md", "# Walrus\nThe walrus lives in the Arctic.\n")
    env = {
        **os.environ, "KB_AGENT_DATA_FOLDER": str(settings.data_folder), "KB_AGENT_STORE": "postgres",
        "KB_AGENT_DATABASE_URL": pg_url, "KB_AGENT_DEFAULT_KB": settings.default_kb, "KB_AGENT_LLM_PROVIDER": "none",
    }  # fmt: skip
    cli = [sys.executable, "-m", "kb_agent.interfaces.cli"]
    subprocess.run([*cli, "index", str(tmp_path / "docs"), "--no-embed"], env=env, check=True, capture_output=True)
    port = _free_port()
    server = subprocess.Popen(
        [*cli, "serve", "--no-auth", "--port", str(port), "--workers", "3"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        answers = set()
        for _ in range(12):
            body = httpx.post(f"{url}/v1/search", json={"query": "walrus", "mode": "bm25"}, timeout=30).json()
            answers.add(tuple((r["path"], r["start_line"], r["end_line"]) for r in body["results"]))
        assert answers == {(("docs/a.md", 1, 2),)}  # every worker answers alike from the shared store
        import psutil

        assert len(psutil.Process(server.pid).children(recursive=True)) >= 3
    finally:
        server.terminate()
        server.wait(30)


def test_serve_workers_refuse_the_embedded_store(tmp_path):
    from typer.testing import CliRunner

    from kb_agent.config import get_settings
    from kb_agent.interfaces.cli import app

    get_settings.cache_clear()
    env = {"KB_AGENT_DATA_FOLDER": str(tmp_path / "data"), "KB_AGENT_STORE": "embedded"}
    result = CliRunner().invoke(app, ["serve", "--no-auth", "--workers", "2"], env=env)
    get_settings.cache_clear()
    assert result.exit_code == 2 and "shared store" in result.output


def test_vectors_this_host_computed_are_imported_not_recomputed(pg_url, tmp_path, embedder):
    from kb_agent.store.migrate import import_cached_vectors

    write(tmp_path / "docs" / "a.md", "# A\nThe walrus lives in the Arctic.\n")
    local = Engine(store_settings("embedded", tmp_path / "data"), embedder=embedder)
    local.index([tmp_path / "docs"])
    local.embed()
    local.close()
    computed = embedder.passages_embedded
    remote = Engine(store_settings("postgres", tmp_path / "data", pg_url), embedder=embedder)
    remote.index([tmp_path / "docs"], on_progress=None)
    kb = remote.kb()
    assert kb.embed_progress().coverage == 0.0
    assert import_cached_vectors(kb, remote.settings.cache_folder) == 1
    assert kb.embed_progress().coverage == 1.0 and len(kb.vectors) == 1
    assert embedder.passages_embedded == computed
    remote.close()


def _keyword_kb(pg_url, tmp_path, embedder, files: dict[str, str]):
    root = tmp_path / "corp"
    for name, text in files.items():
        write(root / name, text)
    engine = Engine(store_settings("postgres", tmp_path / "data", pg_url), embedder=embedder)
    engine.index([root])
    return engine


def test_pruned_keyword_search_reads_only_visible_postings_and_keeps_rare_terms_exact(
    pg_url, tmp_path, embedder, monkeypatch
):
    files = {f"secret/s{i}.md": "widget widget widget widget report\n" for i in range(6)}
    files["secret/.kbacl"] = "hr\n"
    files["public.md"] = "A widget mentioned once in a long page about other things entirely.\n"
    files["rare.md"] = "The quokka widget.\n"
    engine = _keyword_kb(pg_url, tmp_path, embedder, files)
    kb = engine.kb()

    def paths(query: str, depth: int | None, access=OUTSIDER) -> list[str]:
        found = kb.lexical.search(query, 10, access, depth=depth)
        chunks = kb.catalog.get_chunks([i for i, _ in found])
        return [chunks[i].chunk.path for i, _ in found]

    # with two postings per term, the six heavier restricted postings do not use up the outsider's budget
    assert set(paths("widget", 2)) == {"corp/public.md", "corp/rare.md"}
    assert len(paths("widget", 2, AccessFilter.for_groups(["hr"]))) == 2  # hr's two heaviest: the secret pages
    # pruned and exhaustive agree on the rare term that decides the query
    assert paths("quokka widget", 1)[0] == paths("quokka widget", None)[0] == "corp/rare.md"
    _no_acl_condition(monkeypatch)  # control: the budget goes to restricted postings, row-level security drops them
    assert paths("widget", 2) == []
    engine.close()


def test_schema_2_databases_get_their_keyword_index_rebuilt(pg_url, tmp_path, embedder):
    engine = _keyword_kb(pg_url, tmp_path, embedder, {"a.md": "The quokka report.\n", "b.md": "Other text.\n"})
    kb = engine.kb()
    before = kb.lexical.search("quokka report", 10, OUTSIDER)
    with kb.db.write() as conn:  # what a version-2 database holds: no impact rows
        conn.execute("DELETE FROM kb_impacts")
        conn.execute("UPDATE kb_meta SET value='2' WHERE kb='' AND key='schema_version'")
    assert kb.lexical.search("quokka report", 10, OUTSIDER) == []
    kb.db._ensure_schema()
    assert kb.lexical.search("quokka report", 10, OUTSIDER) == before != []
    engine.close()


def test_citus_ddl_distributes_every_table_by_kb_and_every_key_includes_it(pg_url, tmp_path, embedder):
    """Citus is not installable here; what it demands of a schema is checked on the live one: every table is
    distributed (or a reference table), and each primary key, unique constraint and foreign key of a
    distributed table holds the distribution column `kb` (Citus refuses the table otherwise)."""
    import re

    import psycopg

    from kb_agent.store.postgres.schema import CITUS_DDL

    _keyword_kb(pg_url, tmp_path, embedder, {"a.md": "text\n"}).close()  # the schema exists
    distributed = dict(re.findall(r"create_distributed_table\('(\w+)', '(\w+)'", CITUS_DDL))
    reference = set(re.findall(r"create_reference_table\('(\w+)'\)", CITUS_DDL))
    with psycopg.connect(pg_url) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'kb\\_%'")}
        keys = conn.execute(
            "SELECT c.conrelid::regclass::text, c.contype, array_agg(a.attname::text) FROM pg_constraint c "
            "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey) "
            "WHERE c.contype IN ('p', 'u', 'f') AND c.conrelid::regclass::text LIKE 'kb\\_%' GROUP BY c.oid, 1, 2"
        ).fetchall()
    assert tables == set(distributed) | reference
    assert set(distributed.values()) == {"kb"}
    for table, kind, columns in keys:
        if table in distributed:
            assert "kb" in columns, f"{table}: {kind} key {columns} lacks the distribution column"


@pytest.mark.slow  # the whole adversarial suite (525 cases) against the PostgreSQL store
def test_redteam_on_postgres_reports_no_leaks_and_sees_a_broken_acl(pg_url, tmp_path, monkeypatch):
    from kb_agent.evaluation.redteam import run_redteam
    from kb_agent.governance.request import Request

    report = run_redteam(settings=store_settings("postgres", tmp_path / "data", pg_url))
    assert report["cases"] >= 350 and report["leaks"] == 0, report
    # control: every request unrestricted, the same suite on the same store must see leaks
    monkeypatch.setattr(Request, "access", property(lambda self: AccessFilter.unrestricted()))
    broken = run_redteam(
        settings=store_settings("postgres", tmp_path / "data2", pg_url), categories={"direct_ask", "acl_edge"}
    )
    assert broken["leaks"] > 20


def test_the_graph_lives_in_the_database_for_every_host(pg_url, tmp_path, embedder):
    import psycopg

    root = tmp_path / "corp"
    write(root / "a.md", "# A\nSee [the runbook](b.md) for LANG-75.\n")
    write(root / "b.md", "# B\nThe runbook.\n")
    settings = store_settings("postgres", tmp_path / "host1", pg_url)
    writer = Engine(settings, embedder=embedder)
    writer.index([root])
    reader = Engine(settings.model_copy(update={"data_folder": tmp_path / "host2"}), embedder=embedder)
    edges = {(h, t) for h, t in reader.kb().graph().graph.edges()}
    assert ("file:corp/a.md", "file:corp/b.md") in edges
    assert not (tmp_path / "host1" / "kbs").exists() or not list((tmp_path / "host1").rglob("graph.json"))
    write(root / "a.md", "# A\nNo links any more.\n")
    writer.index([root])
    assert ("file:corp/a.md", "file:corp/b.md") not in set(reader.kb().graph().graph.edges())  # reloaded
    with psycopg.connect(pg_url) as conn:  # a transaction that declares no scope cannot read the graph
        assert conn.execute("SELECT count(*) FROM kb_graph").fetchone()[0] == 0
    writer.close()
    reader.close()


def test_the_hnsw_index_is_built_after_a_models_first_vectors_and_can_serve_the_search(pg_engine):
    kb = pg_engine.kb()
    with kb.db.read() as conn:
        assert conn.execute(
            "SELECT 1 FROM pg_indexes WHERE indexname = %s", (f"kb_vectors_hnsw_{kb.model_key}",)
        ).fetchone()
        # on a few rows the planner would rather scan and sort: forbid both, the HNSW index must serve the query
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        vector = pg_engine.embedder().embed_query("salary")
        plan = conn.execute(
            f"EXPLAIN SELECT chunk FROM kb_vectors WHERE model = '{kb.model_key}' AND kb = %s "
            f"ORDER BY embedding::vector({len(vector)}) <#> %s LIMIT 5",
            (kb.name, vector),
        ).fetchall()
    assert f"kb_vectors_hnsw_{kb.model_key}" in " ".join(r[0] for r in plan)


def test_a_dense_search_reads_more_rows_than_asked_and_keeps_the_exact_best_k(pg_url, tmp_path, embedder):
    words = "salary vacation engineer budget travel laptop office payroll pension review".split()
    engine = _keyword_kb(
        pg_url,
        tmp_path,
        embedder,
        {f"note{i}.md": f"# Note {i}\n{words[i % 10]} {words[(i * 3) % 10]} {i}\n" for i in range(40)},
    )
    engine.embed()
    kb = engine.kb()
    vector = engine.embedder().embed_query("salary review")
    everyone = AccessFilter.for_groups([])
    assert kb.vectors.fetch == Settings(_env_file=None).pg_dense_fetch  # KB_AGENT_PG_DENSE_FETCH reaches the store
    kb.vectors.fetch = 30
    wide = kb.vectors.search(vector, 3, everyone)
    kb.vectors.fetch = len(kb.vectors)  # every row: the exact order
    exact = kb.vectors.search(vector, len(kb.vectors), everyone)
    engine.close()
    assert len(exact) == 40
    assert [s for _, s in exact] == sorted((s for _, s in exact), reverse=True)
    assert wide == exact[:3]
