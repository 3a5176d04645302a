"""`kb-agent` command line: index, embed, status, search, eval."""

from __future__ import annotations

import functools
import json
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

out = Console()
err = Console(stderr=True)


def report_failure(exc: BaseException) -> typer.Exit:
    """The one map from a failure to a message and an exit code (denied 3, bad input 2, internal 1)."""
    from kb_agent.governance.errors import classify

    failure = classify(exc)
    label = {"denied": "denied", "unauthenticated": "denied", "limited": "denied"}.get(failure.kind, "error")
    err.print(f"[red]{label}:[/red] {failure.message}", highlight=False, markup=True)
    return typer.Exit(failure.exit_code)


class GovernedTyper(typer.Typer):
    """Every command's exceptions go through `report_failure`: no traceback, the same codes everywhere."""

    @staticmethod
    def _guard(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (typer.Exit, typer.Abort, KeyboardInterrupt, BrokenPipeError):
                raise
            except Exception as exc:
                raise report_failure(exc) from None

        return run

    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)
        return lambda fn: register(self._guard(fn))

    def callback(self, *args, **kwargs):
        register = super().callback(*args, **kwargs)
        return lambda fn: register(self._guard(fn))


app = GovernedTyper(
    add_completion=False,
    invoke_without_command=True,
    help="kb-agent: index a knowledge base, search it, ask it. Without a command: the TUI.",
)
eval_app = GovernedTyper(no_args_is_help=True, help="Measure retrieval (and later answer) quality.")
app.add_typer(eval_app, name="eval")

KbOpt = Annotated[str | None, typer.Option("--kb", help="Knowledge base name (default: KB_AGENT_DEFAULT_KB).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
GroupOpt = Annotated[list[str] | None, typer.Option("--as-group", help="Act as a member of these groups.")]
KbsOpt = Annotated[list[str] | None, typer.Option("--kb", help="Knowledge base(s) to use (repeatable).")]


AsOpt = Annotated[str | None, typer.Option("--as", help="Act as this user (as the policy file defines them).")]


def _user(engine, as_group: list[str] | None, as_user: str | None = None):
    """--as USER (policy lookup) / --as-group G; without either: the local owner, or with a policy file
    the operating-system user as the policy defines them."""
    import getpass

    if as_user is None and as_group is None and not engine.single_user:
        as_user = getpass.getuser()
    return engine.identify(as_user, groups=as_group)


def _engine():
    from kb_agent.config import get_settings
    from kb_agent.engine import Engine
    from kb_agent.governance.policy import PolicyError

    try:
        return Engine(get_settings())
    except ValidationError as exc:
        err.print(f"[red]configuration error:[/red] {exc}")
        raise typer.Exit(2) from exc
    except PolicyError as exc:
        err.print("[red]policy error:[/red]\n" + "\n".join(exc.problems), highlight=False)
        raise typer.Exit(2) from exc
    except OSError as exc:
        err.print(f"[red]configuration error:[/red] {exc}")
        raise typer.Exit(2) from exc


@app.callback()
def _root(
    ctx: typer.Context,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show kb-agent's log lines (fallbacks, retries) on stderr.")
    ] = False,
) -> None:
    """kb-agent: index a knowledge base, search it, ask it. Without a command: the TUI."""
    _logging(verbose)
    if ctx.invoked_subcommand is None:
        from kb_agent.interfaces.tui import run_tui

        engine = _engine()
        run_tui(engine, _user(engine, None, None))


def _logging(verbose: bool) -> None:
    """Fallback notices reach the user as `note:` lines; the log lines behind them only with -v."""
    import logging

    logger = logging.getLogger("kb_agent")
    for handler in list(logger.handlers):
        if getattr(handler, "_kb_agent_cli", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr) if verbose else logging.NullHandler()
    handler._kb_agent_cli = True  # type: ignore[attr-defined]
    if verbose:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}"),
        console=err,
        transient=True,
    )


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="Folders or files to index.")],
    kb: KbOpt = None,
    acl: Annotated[
        list[str] | None, typer.Option("--acl", help="Group allowed to read everything in this run (repeatable).")
    ] = None,
    embed: Annotated[bool, typer.Option("--embed/--no-embed", help="Embed new chunks after parsing.")] = True,
    background: Annotated[bool, typer.Option("--background", help="Embed in a detached worker.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Index files incrementally: only changed files are re-processed, deleted ones are removed."""
    engine = _engine()
    try:
        with _progress() as progress:
            task = progress.add_task("parsing", total=None, note="")

            def on_progress(done: int, total: int, path: str) -> None:
                progress.update(task, completed=done, total=total, note=path[-50:])

            report = engine.index(paths, kb=kb, acl=acl or None, on_progress=on_progress)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: the previous index is unchanged[/yellow]")
        raise typer.Exit(130) from None
    name = kb or engine.settings.default_kb
    summary = {"kb": name, **report.as_dict()}
    if not as_json:
        _print_index_summary(summary)
    if embed:
        if background:
            pid = engine.embed_in_background(name)
            summary["embedding"] = {"background_pid": pid}
            if not as_json:
                err.print(f"embedding in the background (pid {pid}); `kb-agent status` shows progress")
        else:
            summary["embedding"] = _run_embed(engine, name, quiet=as_json)
    if as_json:
        out.print_json(json.dumps(summary))


def _print_index_summary(summary: dict) -> None:
    table = Table(title=f"indexed into {summary['kb']!r}", show_header=False)
    for key in ("added", "updated", "deleted", "unchanged", "chunks_added", "chunks_removed", "chunks_per_s"):
        table.add_row(key.replace("_", " "), str(summary[key]))
    table.add_row("skipped", str(len(summary["skipped"])))
    out.print(table)
    for item in summary["skipped"][:20]:
        out.print(f"skipped: {item['path']} — {item['reason']}", markup=False, highlight=False)
    if len(summary["skipped"]) > 20:
        out.print(f"... and {len(summary['skipped']) - 20} more skipped (all of them: --json)")
    for item in summary["warnings"][:20]:
        out.print(f"warning: {item['path']} — {item['message']}", markup=False, highlight=False)


def _run_embed(engine, kb: str | None, quiet: bool) -> dict:
    """Foreground embedding; Ctrl-C stops after the current batch (what is done stays done)."""
    stop = {"flag": False}

    def on_sigint(*_):
        stop["flag"] = True
        err.print("[yellow]stopping after this batch; `kb-agent embed` resumes[/yellow]")

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        with _progress() as progress:
            task = progress.add_task("embedding", total=None, note="")

            def on_progress(done: int, total: int, elapsed: float) -> None:
                progress.update(task, completed=done, total=total, note=f"{done / max(elapsed, 1e-9):.1f} chunks/s")

            stats = engine.embed(kb, on_progress=None if quiet else on_progress, should_stop=lambda: stop["flag"])
    finally:
        signal.signal(signal.SIGINT, previous)
    if not quiet:
        err.print(
            f"embedded {stats['embedded']} chunks at {stats['chunks_per_s']:.2f} chunks/s; {stats['pending']} pending"
        )
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}


@app.command()
def embed(
    kb: KbOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar (for workers).")] = False,
) -> None:
    """Embed chunks that have no vector yet (resumable; vectors are cached by content hash)."""
    stats = _run_embed(_engine(), kb, quiet)
    if quiet:
        print(json.dumps(stats), flush=True)


@app.command()
def status(kb: KbOpt = None, as_json: JsonOpt = False) -> None:
    """Files, chunks and dense-embedding progress of each knowledge base."""
    rows = [s.as_dict() for s in _engine().status(kb)]
    if as_json:
        out.print_json(json.dumps({"knowledge_bases": rows}))
        return
    if not rows:
        out.print("no knowledge base yet: `kb-agent index PATH`")
    table = Table("kb", "files", "chunks", "embedded", "coverage", "worker", "roots (acl)")
    for row in rows:
        roots = "\n".join(f"{r['path']} ({', '.join(r['acl']) or 'public'})" for r in row["roots"])
        table.add_row(
            row["kb"],
            str(row["files"]),
            str(row["chunks"]),
            str(row["embedded"]),
            f"{row['dense_coverage']:.0%}",
            str(row["embed_worker_pid"] or "-"),
            roots,
        )
    out.print(table)


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
        _fail(f"unknown --mode {mode!r}; choose one of {', '.join(MODES)}", 2)
    engine = _engine()
    response = engine.search(query, user=_user(engine, as_group, as_user), kbs=kb, mode=mode, k=k, hops=hops)  # type: ignore[arg-type]
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


@eval_app.command("retrieval")
def eval_retrieval(
    dataset: Annotated[Path, typer.Option("--dataset", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")],
    split: Annotated[str, typer.Option("--split")] = "test",
    modes: Annotated[str, typer.Option("--modes", help="Comma-separated: bm25,dense,hybrid,hybrid2 (two hops)")] = (
        "bm25,dense,hybrid"
    ),
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N queries.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """nDCG@10, Recall@5/10/100, MRR@10 and latency for each retrieval mode."""
    from kb_agent.config import get_settings
    from kb_agent.evaluation.retrieval import DatasetError, evaluate_retrieval

    wanted = tuple(m.strip() for m in modes.split(",") if m.strip())
    if not wanted or any(m not in ("bm25", "dense", "hybrid", "hybrid2") for m in wanted):
        _fail("--modes takes bm25, dense, hybrid and/or hybrid2", 2)
    try:
        with _progress() as progress:
            task = progress.add_task("embedding", total=None, note="", visible=False)

            def on_embed(done: int, total: int, elapsed: float) -> None:
                progress.update(
                    task, completed=done, total=total, visible=True, note=f"{done / max(elapsed, 1e-9):.1f} chunks/s"
                )

            result = evaluate_retrieval(
                dataset,
                get_settings(),
                split=split,
                modes=wanted,
                limit=limit,
                on_stage=lambda s: err.print(f"[dim]{s}[/dim]"),
                on_embed=on_embed,
            )
    except DatasetError as exc:
        _fail(str(exc), 2)
    if as_json:
        print(json.dumps(result))
        return
    table = Table(
        "mode",
        "nDCG@10",
        "R@5",
        "R@10",
        "R@100",
        "MRR@10",
        "p50 ms",
        "p95 ms",
        title=f"{dataset} ({result['queries']} queries)",
    )
    for mode in wanted:
        r = result[mode]
        table.add_row(
            mode,
            *(f"{r[key]:.4f}" for key in ("ndcg@10", "recall@5", "recall@10", "recall@100", "mrr@10")),
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
        )
    out.print(table)
    out.print(f"indexing: {result['indexing']}")
    for key in ("embedding", "dense_coverage", "query_embedding_ms"):
        if key in result:
            out.print(f"{key}: {result[key]}")


def main() -> None:
    from kb_agent.interfaces import cli_agent, cli_governance, cli_server, cli_tools  # noqa: F401 - registers the commands

    try:
        app()
    except BrokenPipeError:  # `kb-agent search ... | head`
        sys.exit(0)


if __name__ == "__main__":  # `python -m`: run the importable module, where the sub-commands register
    from kb_agent.interfaces import cli as _module

    _module.main()
else:  # imported (tests, `python -m`): make sure every command is registered
    from kb_agent.interfaces import cli_agent, cli_governance, cli_server, cli_tools  # noqa: F401
