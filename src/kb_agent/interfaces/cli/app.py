"""What every command shares: the Typer app, the consoles, the common options, the engine and the caller.

Command modules import this module and register on `app`; nothing here imports a command module."""

from __future__ import annotations

import functools
import sys
from typing import Annotated, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

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

KbOpt = Annotated[str | None, typer.Option("--kb", help="Knowledge base name (default: KB_AGENT_DEFAULT_KB).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
GroupOpt = Annotated[list[str] | None, typer.Option("--as-group", help="Act as a member of these groups.")]
KbsOpt = Annotated[list[str] | None, typer.Option("--kb", help="Knowledge base(s) to use (repeatable).")]


AsOpt = Annotated[str | None, typer.Option("--as", help="Act as this user (as the policy file defines them).")]


def caller(engine, as_group: list[str] | None, as_user: str | None = None):
    """--as USER (policy lookup) / --as-group G; without either: the local owner, or with a policy file
    the operating-system user as the policy defines them."""
    import getpass

    if as_user is None and as_group is None and not engine.single_user:
        as_user = getpass.getuser()
    return engine.identify(as_user, groups=as_group)


def open_engine():
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
        require_extra("textual", "tui", "(the TUI)")
        from kb_agent.interfaces.tui import run_tui

        engine = open_engine()
        run_tui(engine, caller(engine, None, None))


def _logging(verbose: bool) -> None:
    """Fallback notices reach the user as `note:` lines; the log lines behind them only with -v."""
    import logging

    logger = logging.getLogger("kb_agent")
    for old in list(logger.handlers):
        if getattr(old, "_kb_agent_cli", False):
            logger.removeHandler(old)
    handler: logging.Handler = logging.StreamHandler(sys.stderr) if verbose else logging.NullHandler()
    handler._kb_agent_cli = True  # type: ignore[attr-defined]
    if verbose:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)


def require_extra(module: str, extra: str, command: str) -> None:
    """A command whose optional part is not installed says which extra brings it, instead of a traceback."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        fail(f"`kb-agent {command}` needs the {extra!r} extra: pip install 'kb-agent[{extra}]'", 2)


def fail(message: str, code: int = 1) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)  # a message may hold [brackets]
    raise typer.Exit(code)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}"),
        console=err,
        transient=True,
    )
