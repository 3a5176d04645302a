"""`kb-agent ask`, `chat`, `models`, `eval agent`: the answering side of the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from kb_agent.interfaces.cli import (
    AsOpt,
    GovernedTyper,
    GroupOpt,
    JsonOpt,
    KbsOpt,
    _engine,
    _fail,
    _user,
    app,
    err,
    eval_app,
    out,
    report_failure,
)

models_app = GovernedTyper(no_args_is_help=True, help="The local generative model.")
app.add_typer(models_app, name="models")


def _ask_once(engine, question: str, *, kb, user, history, as_json: bool):
    """Steps as they really run, the checked answer streamed once (sentence by sentence), then references."""
    answer = None
    streamed = False
    for event in engine.stream(question, kbs=kb, user=user, history=history):  # a denial raises here
        kind = event["type"]
        if kind == "step" and not as_json:
            err.print(f"[dim]{escape(event['label'])}…[/dim]", highlight=False)
        elif kind == "tool" and not as_json:
            status = f"{event['count']} passages" if event["status"] == "ok" else event.get("error")
            args = json.dumps(event["args"], ensure_ascii=False)[:80]
            err.print(
                f"[dim]   {escape(event['name'])}({escape(args)}) → {escape(str(status))}[/dim]", highlight=False
            )  # escaped: a question or an error could hold [markup]
        elif kind == "token" and not as_json:
            streamed = True
            print(event["text"], end="", flush=True)
        elif kind == "error":  # failed after it started: the same message and exit code as any other failure
            if streamed:
                print()
            err.print(f"[red]error:[/red] {event['error']}", highlight=False)
            raise typer.Exit(event["exit_code"])
        elif kind == "final":
            answer = event["answer"]
    if as_json:
        print(json.dumps(answer.cli_dict(), ensure_ascii=False))
        return answer
    body, _, references = answer.answer.partition("\n\nReferences:\n")
    if not streamed:
        print(body, end="")
    print()
    if references:
        out.print("\nReferences:\n" + references, markup=False, highlight=False)
    for notice in answer.notices:
        err.print(f"[yellow]note:[/yellow] {escape(notice)}", highlight=False)
    err.print(
        f"[dim]route={answer.route.get('query_type')}/{answer.route.get('complexity')} "
        f"llm_calls={answer.llm_calls} iterations={answer.iterations} "
        f"total={sum(answer.timings.values()) / 1000:.1f}s trace={answer.trace_id}[/dim]"
    )
    return answer


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question.")],
    kb: KbsOpt = None,
    as_group: GroupOpt = None,
    as_user: AsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question from the knowledge base, with path:line references (or a clear refusal)."""
    engine = _engine()
    _ask_once(engine, question, kb=kb, user=_user(engine, as_group, as_user), history=[], as_json=as_json)


@app.command()
def chat(kb: KbsOpt = None, as_group: GroupOpt = None, as_user: AsOpt = None) -> None:
    """Interactive session. /mode toggles KB mode (answers from documents) and chat mode; /quit leaves."""
    engine = _engine()
    user = _user(engine, as_group, as_user)
    history: list[dict] = []
    mode = "kb"
    _bind_tab_to_mode()
    err.print("kb-agent chat — Tab or /mode switches KB/chat mode, /clear forgets, /quit leaves")
    while True:
        try:
            line = input(f"[{mode}] you> ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return
        if line == "/clear":
            history.clear()
            continue
        if line == "/mode":
            mode = "chat" if mode == "kb" else "kb"
            err.print(f"mode: {mode}")
            continue
        try:  # a denial or a limit ends this turn, not the session
            if mode == "kb":
                answer = _ask_once(engine, line, kb=kb, user=user, history=history, as_json=False)
                reply = answer.answer if answer else ""
            else:
                reply = _chat_reply(engine, line, history, user)
        except typer.Exit:
            continue
        except Exception as exc:
            report_failure(exc)
            continue
        history += [{"role": "user", "content": line}, {"role": "assistant", "content": reply}]


def _bind_tab_to_mode() -> None:
    """Tab toggles the mode as in the original TUI: a readline macro that submits `/mode`."""
    try:
        import readline
    except ImportError:  # no readline (e.g. Windows): /mode still works
        return
    readline.parse_and_bind(r'"\t": "\C-a\C-k/mode\n"')


def _chat_reply(engine, line: str, history: list[dict], user) -> str:
    """Chat mode through the engine: gated, budgeted, audited and masked like a question."""
    from kb_agent.governance.errors import Unavailable

    try:
        reply = engine.chat(line, user=user, history=history, on_event=lambda e: print(e["text"], end="", flush=True))
    except Unavailable as exc:
        err.print(f"[yellow]{exc}[/yellow]")
        return ""
    print()
    return reply


@models_app.command("install")
def models_install() -> None:
    """Fetch, verify (sha256) and place the default local model in the data folder. Idempotent."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import DEFAULT_MODEL, ModelInstallError, install, is_installed

    settings = get_settings()
    if is_installed(settings.models_folder):
        out.print(f"{DEFAULT_MODEL.filename} is installed and verified in {settings.models_folder}")
        return
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=err
    ) as progress:
        task = progress.add_task(DEFAULT_MODEL.name, total=DEFAULT_MODEL.size)

        def on_progress(done: int, total: int, step: str) -> None:
            progress.update(task, completed=done, description=f"{DEFAULT_MODEL.name}: {step}")

        try:
            path = install(settings.models_folder, on_progress=on_progress)
        except ModelInstallError as exc:
            _fail(str(exc))
    out.print(f"installed {path} (sha256 verified, licence {DEFAULT_MODEL.licence})")


@models_app.command("status")
def models_status(as_json: JsonOpt = False) -> None:
    """Which generative backend `ask` will use."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import DEFAULT_MODEL, is_installed, model_path

    settings = get_settings()
    info = {
        "provider": settings.llm_provider,
        "api": settings.llm_base_url,
        "model": settings.llm_model,
        "local_model": str(settings.local_model_path or model_path(settings.models_folder)),
        "local_model_installed": bool(settings.local_model_path) or is_installed(settings.models_folder),
        "default_local_model": DEFAULT_MODEL.name,
    }
    if as_json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            out.print(f"{key}: {value}")


@eval_app.command("agent")
def eval_agent(
    dataset: Annotated[Path, typer.Option("--dataset", help="Folder with corpus.jsonl and qa.jsonl (HotpotQA).")],
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Evidence recall@5, answer EM/F1, citation precision, LLM calls and seconds per route."""
    from kb_agent.config import get_settings
    from kb_agent.evaluation.agent import evaluate_agent
    from kb_agent.evaluation.retrieval import DatasetError

    try:
        result = evaluate_agent(
            dataset, get_settings(), limit=limit, on_progress=lambda i, n, q: err.print(f"[dim]{i}/{n} {q[:70]}[/dim]")
        )
    except DatasetError as exc:
        _fail(str(exc), 2)
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        out.print(f"{key}: {value}")


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
