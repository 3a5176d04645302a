"""`kb-agent eval retrieval|agent|answers` and `kb-agent redteam`: the harness, started from the command line.

The only interface module that imports `kb_agent.evaluation` (an allowed upward import, tests/test_layers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from kb_agent.interfaces.cli.app import (
    AsOpt,
    GovernedTyper,
    JsonOpt,
    KbOpt,
    app,
    caller,
    err,
    fail,
    open_engine,
    out,
    progress_bar,
    require_extra,
)

eval_app = GovernedTyper(no_args_is_help=True, help="Measure retrieval and answer quality.")
app.add_typer(eval_app, name="eval")


@eval_app.command("retrieval")
def eval_retrieval(
    dataset: Annotated[Path, typer.Option("--dataset", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")],
    split: Annotated[str, typer.Option("--split")] = "test",
    modes: Annotated[str, typer.Option("--modes", help="Comma-separated: bm25,dense,hybrid,hybrid2 (two hops)")] = (
        "bm25,dense,hybrid"
    ),
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N queries.")] = None,
    out_rows: Annotated[
        Path | None, typer.Option("--out", help="Append one JSON row per query and mode to this file.")
    ] = None,
    store: Annotated[str | None, typer.Option("--store", help="embedded | postgres (default: KB_AGENT_STORE).")] = None,
    tune_fusion: Annotated[
        bool, typer.Option("--tune-fusion", help="Also hybrid R@5 at each BM25 / dense weight pair (k-fold pick).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """nDCG@10, Recall@5/10/100, MRR@10 and latency for each retrieval mode."""
    from kb_agent.config import get_settings
    from kb_agent.evaluation.retrieval import DatasetError, evaluate_retrieval

    wanted = tuple(m.strip() for m in modes.split(",") if m.strip())
    if not wanted or any(m not in ("bm25", "dense", "hybrid", "hybrid2") for m in wanted):
        fail("--modes takes bm25, dense, hybrid and/or hybrid2", 2)
    if store not in (None, "embedded", "postgres"):
        fail("--store takes embedded or postgres", 2)
    settings = get_settings() if store is None else get_settings().model_copy(update={"store": store})
    try:
        with progress_bar() as progress:
            task = progress.add_task("embedding", total=None, note="", visible=False)

            def on_embed(done: int, total: int, elapsed: float) -> None:
                progress.update(
                    task, completed=done, total=total, visible=True, note=f"{done / max(elapsed, 1e-9):.1f} chunks/s"
                )

            result = evaluate_retrieval(
                dataset,
                settings,
                split=split,
                modes=wanted,
                limit=limit,
                on_stage=lambda s: err.print(f"[dim]{s}[/dim]"),
                on_embed=on_embed,
                out=out_rows,
                fusion=tune_fusion,
            )
    except DatasetError as exc:
        fail(str(exc), 2)
    if as_json:
        print(json.dumps(result))
        return
    table = Table(
        "mode",
        "nDCG@10",
        "R@2",
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
            *(f"{r[key]:.4f}" for key in ("ndcg@10", "recall@2", "recall@5", "recall@10", "recall@100", "mrr@10")),
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
        )
    out.print(table)
    if "fusion" in result:
        _print_fusion(result["fusion"], f"{dataset}: hybrid at each weight pair")
    out.print(f"indexing: {result['indexing']}")
    for key in ("embedding", "dense_coverage", "query_embedding_ms"):
        if key in result:
            out.print(f"{key}: {result[key]}")


@eval_app.command("fusion")
def eval_fusion(
    question_set: Annotated[
        Path, typer.Option("--set", help="Questions about this KB with gold spans (the `eval answers` JSONL).")
    ],
    kb: KbOpt = None,
    save: Annotated[
        bool, typer.Option("--save", help="Store the recommended weights in the KB (equal weights: forget them).")
    ] = False,
    as_user: AsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """BM25 / dense fusion weights for one knowledge base: recall@5 of its gold spans at each weight pair, the
    pair chosen k-fold, and with --save the recommended pair stored for every hybrid search over the KB."""
    from kb_agent.evaluation.answers import load_set
    from kb_agent.evaluation.fusion_tuning import tune_knowledge_base
    from kb_agent.evaluation.retrieval import DatasetError

    try:
        items = load_set(question_set)
    except DatasetError as exc:
        fail(str(exc), 2)
    engine = open_engine()
    name = kb or engine.settings.default_kb
    with progress_bar() as progress:
        task = progress.add_task("weight pairs", total=None, note="")
        result = tune_knowledge_base(
            engine,
            name,
            items,
            save=save,
            user=caller(engine, None, as_user),
            on_progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
        return
    _print_fusion(result, f"{name}: {result['questions']} questions with gold")
    if "stored" in result:
        stored = result["stored"]
        out.print(
            f"stored in {name!r}: bm25 {stored['bm25']:g}, dense {stored['dense']:g}"
            if stored
            else f"{name!r} uses the configured weights (nothing stored)",
            highlight=False,
        )


def _print_fusion(result: dict, title: str) -> None:
    table = Table("bm25", "dense", "R@5", "MRR@10", title=title)
    for row in result["grid"]:
        table.add_row(f"{row['bm25']:g}", f"{row['dense']:g}", f"{row['recall@5']:.4f}", f"{row['mrr@10']:.4f}")
    out.print(table)
    pair = result["recommended"]
    out.print(f"recommended: bm25 {pair['bm25']:g}, dense {pair['dense']:g} ({result['reason']})", highlight=False)
    if pair != {"bm25": 1.0, "dense": 1.0}:
        err.print(
            "[dim]recall only: check the answers first (`kb-agent eval answers` with KB_AGENT_RRF_WEIGHT_BM25="
            f"{pair['bm25']:g} KB_AGENT_RRF_WEIGHT_DENSE={pair['dense']:g})[/dim]"
        )


@eval_app.command("agent")
def eval_agent(
    dataset: Annotated[Path, typer.Option("--dataset", help="Folder with corpus.jsonl and qa.jsonl (HotpotQA).")],
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    out_rows: Annotated[
        Path | None, typer.Option("--out", help="Append one JSON row per question to this file.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write a static HTML page with plots (recall vs calls/seconds).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Evidence recall@2/@5, all gold @5, answer EM/F1/contains, citation precision, steps, LLM calls and
    seconds - overall, per route and per hop count."""
    from kb_agent.config import get_settings
    from kb_agent.evaluation.agent import evaluate_agent
    from kb_agent.evaluation.retrieval import DatasetError

    try:
        result = evaluate_agent(
            dataset,
            get_settings(),
            limit=limit,
            on_progress=lambda i, n, q: err.print(f"[dim]{i}/{n} {escape(q[:70])}[/dim]"),
            out=out_rows,
            report=report,
        )
    except DatasetError as exc:
        fail(str(exc), 2)
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        out.print(f"{key}: {value}", markup=False, highlight=False)
    if report is not None:
        err.print(f"report: {report}")


@eval_app.command("answers")
def eval_answers(
    docs: Annotated[Path, typer.Option("--docs", help="Folder of documents the questions are about.")],
    question_set: Annotated[
        Path, typer.Option("--set", help="Question set (JSONL: question, gold spans, must_contain, type, split).")
    ],
    split: Annotated[str | None, typer.Option("--split", help="Only this split (e.g. tune, holdout).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Append one JSON row per question to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer quality: contains the gold, cites the gold lines, claims kept/removed, unanswerable refused,
    chitchat without retrieval, LLM calls and seconds - overall, per type and per split."""
    from kb_agent.config import get_settings
    from kb_agent.evaluation.answers import evaluate_answers

    result = evaluate_answers(
        docs,
        question_set,
        get_settings(),
        split=split,
        limit=limit,
        out=out,
        on_progress=lambda i, n, q: err.print(f"[dim]{i}/{n} {escape(q[:70])}[/dim]"),
    )
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
        return
    keys = (
        "questions",
        "contains_gold",
        "cites_gold",
        "cites_gold_text",
        "unanswerable_refused",
        "chitchat_ok",
        "claims_kept",
        "claims_removed",
        "unsupported_kept",
        "errors",
        "llm_calls",
        "seconds_p50",
    )
    rows = [("all", result["all"]), *result["by_split"].items(), *result["by_type"].items()]
    for name, block in rows:
        out_line = "  ".join(f"{k}={block[k]}" for k in keys if block.get(k) is not None)
        print(f"{name:<16} {out_line}")


@app.command()
def redteam(as_json: JsonOpt = False) -> None:
    """Run the adversarial suite (≥ 200 cases) against a built-in fixture KB and policy; exit 1 on any leak."""
    for module in ("fastapi", "jwt", "mcp"):  # the transport cases attack the real HTTP and MCP apps
        require_extra(module, "all", "redteam")
    from kb_agent.config import get_settings
    from kb_agent.evaluation.redteam import run_redteam

    with out.status("red team: running cases…") as status:
        result = run_redteam(get_settings(), on_progress=lambda n, total: status.update(f"red team: case {n}/{total}"))
    if as_json:
        print(json.dumps({k: result[k] for k in ("cases", "leaks", "by_category")}))
    else:
        for name, row in result["by_category"].items():
            out.print(f"{name:<20} {row['cases']:>4} cases  {row['leaks']} leaks", highlight=False)
        out.print(f"total: {result['cases']} cases, {result['leaks']} leaks", highlight=False)
        for case in result["leaked_cases"][:20]:
            out.print(f"  LEAK {case}", highlight=False, markup=False)
    if result["leaks"]:
        raise typer.Exit(1)
