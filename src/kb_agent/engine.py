"""The Engine: the one object interfaces talk to (CLI today; TUI, server and MCP later)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kb_agent.config import Settings, get_settings
from kb_agent.ingest.indexer import Indexer, IndexReport, ProgressFn
from kb_agent.llm.embeddings import Embedder, get_embedder
from kb_agent.retrieval.searcher import Searcher
from kb_agent.retrieval.types import Mode, SearchResponse
from kb_agent.store.access import AccessFilter
from kb_agent.store.kb import KBError, KnowledgeBase


@dataclass
class KBStatus:
    name: str
    files: int
    chunks: int
    embedded: int
    model: str
    roots: dict[str, list[str]]
    worker_pid: int | None

    @property
    def coverage(self) -> float:
        return 1.0 if self.chunks == 0 else self.embedded / self.chunks

    def as_dict(self) -> dict:
        return {
            "kb": self.name, "files": self.files, "chunks": self.chunks, "embedded": self.embedded,
            "dense_coverage": round(self.coverage, 4), "embedding_model": self.model,
            "roots": [{"path": r, "acl": a} for r, a in self.roots.items()], "embed_worker_pid": self.worker_pid,
        }


class Engine:
    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None):
        self.settings = settings or get_settings()
        self._embedder = embedder  # None: the configured one, loaded on first use
        self._kbs: dict[str, KnowledgeBase] = {}

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # -- knowledge bases ---------------------------------------------------------------------------
    def kb(self, name: str | None = None, *, create: bool = False) -> KnowledgeBase:
        name = name or self.settings.default_kb
        if name not in self._kbs:
            if not create and not KnowledgeBase.exists(name, self.settings):
                known = ", ".join(KnowledgeBase.list_names(self.settings)) or "none yet"
                raise KBError(f"knowledge base {name!r} does not exist (known: {known}); run `kb-agent index`")
            model_id = self._embedder.model_id if self._embedder is not None else None
            self._kbs[name] = KnowledgeBase(name, self.settings, model_id=model_id)
        return self._kbs[name]

    def kb_names(self) -> list[str]:
        return KnowledgeBase.list_names(self.settings)

    def close(self) -> None:
        for kb in self._kbs.values():
            kb.close()
        self._kbs.clear()

    # -- indexing ----------------------------------------------------------------------------------
    def index(
        self, paths: list[Path], *, kb: str | None = None, acl: list[str] | None = None,
        on_progress: ProgressFn | None = None,
    ) -> IndexReport:
        return Indexer(self.kb(kb, create=True)).run(paths, acl=acl, on_progress=on_progress)

    def embed(
        self, kb: str | None = None, *, on_progress: Callable[[int, int, float], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict:
        knowledge_base = self.kb(kb)
        pid_file = knowledge_base.folder / "embed.pid"
        pid_file.write_text(str(os.getpid()))
        try:
            return knowledge_base.embed_pending(self.embedder(), on_progress=on_progress, should_stop=should_stop)
        finally:
            pid_file.unlink(missing_ok=True)

    def embed_in_background(self, kb: str | None = None) -> int:
        """Start `kb-agent embed` as a detached process; returns its pid. Output goes to embed.log."""
        knowledge_base = self.kb(kb)
        log = open(knowledge_base.folder / "embed.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(
            [sys.executable, "-m", "kb_agent.interfaces.cli", "embed", "--kb", knowledge_base.name, "--quiet"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "KB_AGENT_DATA_FOLDER": str(self.settings.data_folder)},
        )
        return proc.pid

    def status(self, kb: str | None = None) -> list[KBStatus]:
        names = [kb] if kb else self.kb_names()
        out = []
        for name in names:
            knowledge_base = self.kb(name)
            progress = knowledge_base.embed_progress()
            out.append(
                KBStatus(
                    name=name, files=knowledge_base.catalog.count_files(), chunks=progress.total,
                    embedded=progress.embedded, model=knowledge_base.model_id,
                    roots=knowledge_base.catalog.roots(), worker_pid=_live_pid(knowledge_base.folder / "embed.pid"),
                )
            )
        return out

    # -- retrieval ---------------------------------------------------------------------------------
    def searcher(self, kbs: list[str] | None = None) -> Searcher:
        names = kbs or [self.settings.default_kb]
        return Searcher([self.kb(n) for n in names], self.settings, embedder=self.embedder)

    def search(
        self, query: str, *, access: AccessFilter, kbs: list[str] | None = None, mode: Mode = "hybrid", k: int = 10
    ) -> SearchResponse:
        return self.searcher(kbs).search(query, access=access, mode=mode, k=k)


def _live_pid(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid
