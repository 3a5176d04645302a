"""`kb-agent ask` and `kb-agent chat`: the answering side of the command line."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from kb_agent.interfaces.cli.app import (
    AsOpt,
    GroupOpt,
    JsonOpt,
    KbsOpt,
    app,
    caller,
    err,
    open_engine,
    out,
    report_failure,
)


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
    if answer is None:  # the stream always ends with "final" or "error"; never silently print nothing
        raise RuntimeError("the answer stream ended without an answer")
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
    engine = open_engine()
    _ask_once(engine, question, kb=kb, user=caller(engine, as_group, as_user), history=[], as_json=as_json)


@app.command()
def chat(kb: KbsOpt = None, as_group: GroupOpt = None, as_user: AsOpt = None) -> None:
    """Interactive session. /mode toggles KB mode (answers from documents) and chat mode; /quit leaves."""
    engine = open_engine()
    user = caller(engine, as_group, as_user)
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
