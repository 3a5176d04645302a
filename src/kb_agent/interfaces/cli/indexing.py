"""`kb-agent index`, `embed`, `status`: bring a knowledge base in line with its files."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kb_agent.interfaces.cli.app import JsonOpt, KbOpt, app, err, open_engine, out, progress_bar


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="Folders or files to index.")],
    kb: KbOpt = None,
    acl: Annotated[
        list[str] | None, typer.Option("--acl", help="Group allowed to read everything in this run (repeatable).")
    ] = None,
    embed: Annotated[bool, typer.Option("--embed/--no-embed", help="Embed new chunks after parsing.")] = True,
    background: Annotated[bool, typer.Option("--background", help="Embed in a detached worker.")] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="First forget indexed roots that no longer exist on disk.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Index files incrementally: only changed files are re-processed, deleted ones are removed."""
    engine = open_engine()
    pruned = engine.remove(None, kb=kb) if prune and (kb or engine.settings.default_kb) in engine.kb_names() else None
    try:
        with progress_bar() as progress:
            task = progress.add_task("parsing", total=None, note="")

            def on_progress(done: int, total: int, path: str) -> None:
                progress.update(task, completed=done, total=total, note=path[-50:])

            report = engine.index(paths, kb=kb, acl=acl or None, on_progress=on_progress)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: the previous index is unchanged[/yellow]")
        raise typer.Exit(130) from None
    name = kb or engine.settings.default_kb
    if pruned is not None:
        report.deleted = pruned.deleted + report.deleted
        report.chunks_removed += pruned.chunks_removed
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


@app.command()
def remove(
    paths: Annotated[list[Path], typer.Argument(help="Indexed root folders or files to forget (they may be gone).")],
    kb: KbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Forget indexed roots: their files and chunks leave every search (the files on disk are not touched)."""
    engine = open_engine()
    report = engine.remove(paths, kb=kb)
    summary = {
        "kb": kb or engine.settings.default_kb,
        "removed_files": report.deleted,
        "chunks_removed": report.chunks_removed,
    }
    if as_json:
        out.print_json(json.dumps(summary))
        return
    out.print(f"removed {len(report.deleted)} files ({report.chunks_removed} chunks)", highlight=False)


@app.command()
def repair(kb: KbOpt = None, as_json: JsonOpt = False) -> None:
    """Check a knowledge base's store files and rebuild the keyword index, dense store and graph from the
    catalog and the embedding cache (after a crash, a lost folder or a damaged file)."""
    engine = open_engine()
    done = engine.repair(kb)
    if as_json:
        out.print_json(json.dumps({"kb": kb or engine.settings.default_kb, "done": done}))
        return
    for line in done:
        out.print(f"- {line}", markup=False, highlight=False)


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
        with progress_bar() as progress:
            task = progress.add_task("embedding", total=None, note="")

            def on_progress(done: int, total: int, elapsed: float) -> None:
                progress.update(task, completed=done, total=total, note=f"{done / max(elapsed, 1e-9):.1f} passages/s")

            stats = engine.embed(kb, on_progress=None if quiet else on_progress, should_stop=lambda: stop["flag"])
    finally:
        signal.signal(signal.SIGINT, previous)
    if not quiet:
        err.print(
            f"embedded {stats['embedded']} passages (each chunk's head, the tail of a long one) at "
            f"{stats['chunks_per_s']:.2f}/s; {stats['pending']} pending"
        )
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}


@app.command()
def embed(
    kb: KbOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar (for workers).")] = False,
) -> None:
    """Embed chunks that have no vector yet (resumable; vectors are cached by content hash)."""
    stats = _run_embed(open_engine(), kb, quiet)
    if quiet:
        print(json.dumps(stats), flush=True)


@app.command()
def status(kb: KbOpt = None, as_json: JsonOpt = False) -> None:
    """Files, chunks and dense-embedding progress of each knowledge base."""
    rows = [s.as_dict() for s in open_engine().status(kb)]
    if as_json:
        out.print_json(json.dumps({"knowledge_bases": rows}))
        return
    if not rows:
        out.print("no knowledge base yet: `kb-agent index PATH`")
    table = Table("kb", "files", "chunks", "embedded", "coverage", "worker", "translated", "roots (acl)")
    for row in rows:
        roots = "\n".join(f"{r['path']} ({', '.join(r['acl']) or 'public'})" for r in row["roots"])
        table.add_row(
            row["kb"],
            str(row["files"]),
            str(row["chunks"]),
            str(row["embedded"]),
            f"{row['dense_coverage']:.0%}",
            str(row["embed_worker_pid"] or "-"),
            f"{row['translated_pages']} pages, {row['lexicon_words']} words" if row["translated_pages"] else "-",
            roots,
        )
    out.print(table)
