"""`kb-agent tools` (list the Tool Cards, run one as the agent would) and `kb-agent vault`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from kb_agent.interfaces.cli.app import (
    AsOpt,
    GovernedTyper,
    GroupOpt,
    JsonOpt,
    KbsOpt,
    app,
    caller,
    fail,
    open_engine,
    out,
)

tools_app = GovernedTyper(invoke_without_command=True, help="Tool Cards: list them, or run one tool.")
app.add_typer(tools_app, name="tools")


@tools_app.callback()
def tools_list(ctx: typer.Context, as_group: GroupOpt = None, as_user: AsOpt = None, as_json: JsonOpt = False) -> None:
    """List the Tool Cards the caller may use."""
    if ctx.invoked_subcommand is not None:
        return
    engine = open_engine()
    cards = engine.tool_cards(caller(engine, as_group, as_user))
    if as_json:
        print(json.dumps([c.model_dump() for c in cards], ensure_ascii=False))
        return
    for card in cards:
        args = ", ".join(card.input_schema.get("properties", {}))
        limit = f", {card.rate_limit}" if card.rate_limit else ""
        out.print(
            f"[bold]{card.name}[/bold]({args})  [dim]{card.freshness}, {card.timeout_ms} ms{limit}, "
            f"scope {'/'.join(card.auth_scope)}[/dim]\n    {card.description}",
            highlight=False,
        )


@tools_app.command("run")
def tools_run(
    name: Annotated[str, typer.Argument(help="Tool name, as `kb-agent tools` lists it.")],
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    kb: KbsOpt = None,
    as_group: GroupOpt = None,
    as_user: AsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one tool with the same validation, ACL, rate limit and timeout as the agent."""
    from kb_agent.tools.file_tools import numbered

    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as exc:
        fail(f"--args is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", 2)
    if not isinstance(parsed, dict):
        fail('--args must be a JSON object, e.g. \'{"query": "..."}\'', 2)
    engine = open_engine()
    result = engine.run_tool(name, parsed, user=caller(engine, as_group, as_user), kbs=kb)
    if as_json:
        print(json.dumps(result.public_dict(), ensure_ascii=False))
    elif result.status != "ok":
        out.print(f"[red]{result.status}[/red]: {result.error}", highlight=False)
    else:
        for item in result.evidence:
            out.print(f"[bold]{item.citation}[/bold]", highlight=False)
            out.print(numbered(item), highlight=False, markup=False)
    if result.status != "ok":
        raise typer.Exit(1 if result.status == "error" else 3)


vault_app = GovernedTyper(no_args_is_help=True, help="Connector credentials, encrypted at rest.")
app.add_typer(vault_app, name="vault")


@vault_app.command("keygen")
def vault_keygen() -> None:
    """Print a new vault key: export it as KB_AGENT_VAULT_KEY (keep it out of the repository)."""
    from kb_agent.governance.vault import Vault

    print(Vault.generate_key())


@vault_app.command("set")
def vault_set(
    name: Annotated[str, typer.Argument(help="Credential name, e.g. jira or confluence.")],
    from_stdin: Annotated[bool, typer.Option("--stdin", help="Read the secret from standard input.")] = False,
) -> None:
    """Store a secret ("user:token" for basic auth, or a bearer token). It is never echoed."""
    import sys

    from kb_agent.governance.vault import VaultError

    secret = sys.stdin.readline().rstrip("\n") if from_stdin else typer.prompt("secret", hide_input=True)
    if not secret:
        fail("empty secret", 2)
    try:
        open_engine().vault.set(name, secret)
    except VaultError as exc:
        fail(str(exc), 2)
    out.print(f"stored credential {name!r}")


@vault_app.command("list")
def vault_list(as_json: JsonOpt = False) -> None:
    """Credential names (never their values)."""
    names = open_engine().vault.names()
    print(json.dumps(names)) if as_json else out.print("\n".join(names) or "(empty)")


@vault_app.command("delete")
def vault_delete(name: Annotated[str, typer.Argument()]) -> None:
    if not open_engine().vault.delete(name):
        fail(f"no credential named {name!r}")
    out.print(f"deleted {name!r}")
