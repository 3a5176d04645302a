"""One connection pool per process and database URL; every statement runs in a declared access scope.

A reader's transaction declares the caller's groups (row-level security, the second guard after the
ACL condition inside each query); store-internal reads and all writes declare the unrestricted scope.
A transaction that declares nothing sees no restricted row at all (fail closed)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.errors import Unavailable
from kb_agent.store.postgres.schema import DDL, RLS, SCHEMA_VERSION

log = logging.getLogger("kb_agent.store")
_pools: dict[str, Database] = {}
_pools_lock = threading.Lock()


class StoreUnreachable(Unavailable):
    """The PostgreSQL store does not answer (HTTP 503, exit 1)."""


def database_url(settings: Settings) -> str:
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    from kb_agent.store.postgres.embedded import saved_url

    url = saved_url(settings)
    if url is None:
        raise StoreUnreachable(
            "KB_AGENT_STORE=postgres needs a database: set KB_AGENT_DATABASE_URL, or run `kb-agent db start` "
            "for the embedded PostgreSQL in the data folder"
        )
    return url


def database_for(settings: Settings) -> Database:
    url = database_url(settings)
    with _pools_lock:
        db = _pools.get(url)
        if db is None:
            db = _pools[url] = Database(
                url,
                pool_size=settings.db_pool_size,
                ef_search=settings.pg_ef_search,
                dense_fetch=settings.pg_dense_fetch,
            )
        return db


def close_all() -> None:
    with _pools_lock:
        for db in _pools.values():
            db.close()
        _pools.clear()


class Database:
    def __init__(self, url: str, *, pool_size: int = 4, ef_search: int = 100, dense_fetch: int = 100):
        try:
            import psycopg
            from pgvector.psycopg import register_vector
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise Unavailable(
                "KB_AGENT_STORE=postgres needs the `postgres` extra: pip install 'kb-agent[postgres]'"
            ) from exc
        self.url = url
        self.ef_search = ef_search
        self.dense_fetch = dense_fetch

        def configure(conn) -> None:
            register_vector(conn)
            # iterative scans keep filtered HNSW searches from returning fewer rows than asked for
            conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")
            conn.execute("SET hnsw.iterative_scan = relaxed_order")
            conn.commit()

        self._pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, configure=configure, open=False, kwargs={"connect_timeout": 10}
        )
        self._local = threading.local()  # a writer's transaction connection, per thread
        try:
            psycopg.connect(url, connect_timeout=10).close()  # fail at once (the pool would keep retrying)
            self._pool.open(wait=True, timeout=15)
        except Exception as exc:
            self._pool.close()
            raise StoreUnreachable(f"the PostgreSQL store does not answer ({_safe(exc)})") from exc
        self._ensure_schema()

    def close(self) -> None:
        self._pool.close()

    def _ensure_schema(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(7160301)")  # one process creates the schema
            if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                try:
                    with conn.transaction():
                        conn.execute("CREATE EXTENSION vector")
                except Exception as exc:
                    raise Unavailable(
                        f"the database has no pgvector extension and this role cannot add it ({_safe(exc)}); "
                        "a superuser runs: CREATE EXTENSION vector"
                    ) from exc
            conn.execute(DDL)
            conn.execute(RLS)
            if conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
                log.warning(
                    "the PostgreSQL role is a superuser or has BYPASSRLS: row-level security, the second ACL guard, "
                    "does not apply to it; connect as an ordinary role (`kb-agent db start` creates one)"
                )
            conn.execute("SELECT set_config('kb_agent.scope', 'all', true)")
            version = conn.execute("SELECT value FROM kb_meta WHERE kb='' AND key='schema_version'").fetchone()
            if version and version[0] in ("1", "2"):  # -> 3: the keyword index became impact-ordered postings
                # (4 added kb_graph: created above, filled by the next index run)
                conn.execute("DELETE FROM kb_impacts")
                conn.execute(_IMPACTS_FROM_CHUNKS)
                conn.execute("DROP TABLE IF EXISTS kb_postings")
            conn.execute(
                "INSERT INTO kb_meta(kb, key, value) VALUES ('', 'schema_version', %s) "
                "ON CONFLICT (kb, key) DO UPDATE SET value = excluded.value",
                (SCHEMA_VERSION,),
            )

    def health(self) -> dict:
        try:
            with self._pool.connection(timeout=5) as conn:
                version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
                bypass = conn.execute(
                    "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
                ).fetchone()[0]
            stats = self._pool.get_stats()
            return {
                "reachable": True,
                "pgvector": version[0] if version else None,
                # a superuser or BYPASSRLS role skips row-level security: only the query's ACL condition holds
                "row_level_security": not bypass,
                "pool": stats.get("pool_size"),
            }
        except Exception as exc:
            return {"reachable": False, "error": _safe(exc)}

    def vacuum_analyze(self, tables: str) -> None:
        """After a bulk write: fresh statistics (else the planner skips the GIN, B-tree and HNSW indexes) and a
        visibility map, so keyword postings are read from the index alone. VACUUM runs outside a transaction."""
        with self._checkout() as conn:
            conn.autocommit = True
            try:
                conn.execute(f"VACUUM (ANALYZE) {tables}")
            finally:
                conn.autocommit = False

    # -- scoped access ------------------------------------------------------------------------------
    @contextmanager
    def _checkout(self) -> Iterator[Any]:
        """A pooled connection; a store that does not answer is `StoreUnreachable` (503), for readers and writers."""
        try:
            conn = self._pool.getconn(timeout=30)
        except Exception as exc:
            raise StoreUnreachable(f"the PostgreSQL store does not answer ({_safe(exc)})") from exc
        try:
            yield conn
        finally:
            self._pool.putconn(conn)

    @contextmanager
    def read(self, access: AccessFilter | None = None) -> Iterator[Any]:
        """A connection in one transaction whose row-level scope is the caller's (None: store-internal)."""
        tx = getattr(self._local, "conn", None)
        if tx is not None:  # inside this thread's write run: see its own uncommitted rows
            yield tx
            return
        with self._checkout() as conn, conn.transaction():
            _declare(conn, access)
            yield conn

    @contextmanager
    def write(self) -> Iterator[Any]:
        """This thread's one write transaction (nested calls share it); commits when the outermost ends."""
        tx = getattr(self._local, "conn", None)
        if tx is not None:
            yield tx
            return
        with self._checkout() as conn, conn.transaction():
            _declare(conn, None)
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None


# sparsevec's text form is {index:value,...}/dim with 1-based indices; term ids are the 0-based ones
_IMPACTS_FROM_CHUNKS = """
INSERT INTO kb_impacts (kb, term, chunk, weight, acl)
SELECT c.kb, split_part(e, ':', 1)::int - 1, c.id, split_part(e, ':', 2)::real, c.acl
FROM kb_chunks c, unnest(string_to_array(btrim(split_part(c.bm25::text, '/', 1), '{}'), ',')) AS e
"""


def acl_condition(access: AccessFilter) -> tuple[str, list]:
    """The first guard: the caller's ACL as a condition inside the query (SQL fragment, its parameters)."""
    if not access.restricted:
        return "", []
    return " AND (acl = '{}' OR acl && %s::text[])", [sorted(access.groups or ())]


def _declare(conn, access: AccessFilter | None) -> None:
    if access is None or not access.restricted:
        conn.execute("SELECT set_config('kb_agent.scope', 'all', true)")
    else:
        conn.execute(
            "SELECT set_config('kb_agent.scope', 'groups', true), "
            "set_config('kb_agent.groups', %s::text[]::text, true)",
            (sorted(access.groups or ()),),
        )


def _safe(exc: BaseException) -> str:
    """An error message without the connection password."""
    text = f"{type(exc).__name__}: {exc}"
    return text.split("password=")[0][:300]
