"""`kb-agent`: the command line. `app.py` holds what every command shares; each module registers its commands.

Importing this package registers every command; `main` is the console-script entry point."""

from __future__ import annotations

import sys

from kb_agent.interfaces.cli import (  # noqa: F401
    ask,
    database,
    evaluate,
    governance,
    indexing,
    models,
    search,
    server,
    tools,
)
from kb_agent.interfaces.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # `kb-agent search ... | head`
        sys.exit(0)
