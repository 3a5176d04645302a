"""`kb-agent search`: ranked passages with path:Lx-Ly citations."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from kb_agent.interfaces.cli.app import AsOpt, JsonOpt, app, caller, err, fail, open_engine, out


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    kb: Annotated[list[str] | None, typer.Option("--kb", help="Knowledge base(s) to search (repeatable).")] = None,
    mode: Annotated[str, typer.Option("--mode", help="hybrid | bm25 | dense | grep")] = "hybrid",
    k: Annotated[int, typer.Option("--k", min=1, max=1000, help="Number of results.")] = 10,
    hops: Annotated[
        int, typer.Option("--hops", min=1, max=2, help="2 = also follow documents named in the top passages.")
    ] = 1,
    as_group: Annotated[
        list[str] | None, typer.Option("--as-group", help="Search as a member of these groups (repeatable).")
    ] = None,
    as_user: AsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ranked passages with path:Lx-Ly citations."""
    from kb_agent.engine import SEARCH_MODES as MODES

    if mode not in MODES:
        fail(f"unknown --mode {mode!r}; choose one of {', '.join(MODES)}", 2)
    engine = open_engine()
    response = engine.search(query, user=caller(engine, as_group, as_user), kbs=kb, mode=mode, k=k, hops=hops)
    for notice in response.notices:
        err.print(f"[yellow]note:[/yellow] {notice}")
    if as_json:
        payload = {
            "results": [h.public_dict() for h in response.hits],
            "mode": response.mode,
            "dense_coverage": response.dense_coverage,
            "timings_ms": response.timings_ms,
            "notices": response.notices,
        }
        print(json.dumps(payload, ensure_ascii=False))
        return
    if not response.hits:
        out.print("no results")
    for rank, hit in enumerate(response.hits, start=1):
        ranks = " ".join(f"{name}#{r}" for name, r in hit.ranks.items())
        out.print(f"[bold]{rank}. {hit.citation}[/bold]  score={hit.score:.4f}  [dim]{ranks}[/dim]")
        snippet = " ".join(hit.text.split())[:240]
        out.print(f"   {snippet}", markup=False, highlight=False)
