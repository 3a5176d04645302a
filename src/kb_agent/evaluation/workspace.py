"""The engine an evaluation runs on: a throw-away data folder for its index, but the user's installed model
and shared embedding cache (a second run embeds nothing)."""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kb_agent.config import Settings
from kb_agent.llm.model_install import local_model_file


@contextmanager
def throwaway_engine(settings: Settings, prefix: str, engine_factory: Callable | None = None) -> Iterator:
    from kb_agent.engine import Engine

    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    local_model = local_model_file(settings)
    eval_settings = settings.model_copy(
        update={"data_folder": workdir, "local_model_path": local_model if local_model.is_file() else None}
    )
    engine = (
        engine_factory(eval_settings) if engine_factory else Engine(eval_settings, cache_folder=settings.cache_folder)
    )
    previous = _exit_on_sigterm()
    try:
        yield engine
    finally:
        engine.close()
        shutil.rmtree(workdir, ignore_errors=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm():
    """SIGTERM (a CI timeout, `kill`) unwinds like Ctrl-C, so the throw-away folder is removed; returns the
    handler it replaced (None off the main thread, where signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, stop)
