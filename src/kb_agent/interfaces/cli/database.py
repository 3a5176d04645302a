"""`kb-agent db start|stop|status` (the embedded PostgreSQL) and `kb-agent migrate` (embedded -> PostgreSQL)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from kb_agent.interfaces.cli.app import GovernedTyper, JsonOpt, KbOpt, app, err, open_engine, out, require_extra

db_app = GovernedTyper(help="The embedded PostgreSQL + pgvector server for KB_AGENT_STORE=postgres.")
app.add_typer(db_app, name="db")


def _settings():
    from kb_agent.config import get_settings

    require_extra("psycopg", "postgres", "db")
    return get_settings()


@db_app.command("start")
def db_start(as_json: JsonOpt = False) -> None:
    """Initialise (first time) and start PostgreSQL in the data folder, on a loopback port, with a password."""
    from kb_agent.engine import Engine

    state = Engine.database(_settings(), "start")
    if as_json:
        out.print_json(json.dumps(state))
        return
    err.print(
        f"PostgreSQL is running on 127.0.0.1:{state['port']} as {state['os_user']!r} ({state['folder']}); "
        "use it with KB_AGENT_STORE=postgres (the connection is read from the data folder)"
    )


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded PostgreSQL (transactions in flight roll back)."""
    from kb_agent.engine import Engine

    stopped = Engine.database(_settings(), "stop")["stopped"]
    err.print("stopped" if stopped else "it was not running")


@db_app.command("status")
def db_status(as_json: JsonOpt = False) -> None:
    """Whether the embedded PostgreSQL is initialised and running, and where."""
    from kb_agent.engine import Engine

    state = Engine.database(_settings(), "status")
    if as_json:
        out.print_json(json.dumps(state))
        return
    for key, value in state.items():
        out.print(f"{key}: {value}", markup=False, highlight=False)


@app.command()
def migrate(
    to: Annotated[str, typer.Option("--to", help="Target store (postgres).")] = "postgres",
    kb: KbOpt = None,
    replace: Annotated[bool, typer.Option("--replace", help="Overwrite a knowledge base already there.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Copy an embedded knowledge base into PostgreSQL: files, chunks, ACLs and vectors (nothing re-embedded)."""
    require_extra("psycopg", "postgres", "migrate")
    report = open_engine().migrate(kb, to=to, replace=replace)
    if as_json:
        out.print_json(json.dumps(report))
        return
    out.print(
        f"migrated {report['kb']!r}: {report['files']} files, {report['chunks']} chunks, {report['vectors']} vectors "
        f"in {report['seconds']} s; use it with KB_AGENT_STORE=postgres",
        markup=False,
        highlight=False,
    )
