"""The Engine: the one object interfaces talk to (CLI today; TUI, server and MCP later)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kb_agent.agent.answer import Answer
from kb_agent.agent.context import AgentContext, EventFn
from kb_agent.agent.graph import build_graph
from kb_agent.agent.tool_mode import run_tool_mode
from kb_agent.config import Settings, get_settings
from kb_agent.connectors.services import Connectors
from kb_agent.governance.audit import AuditLog
from kb_agent.governance.gate import Gate
from kb_agent.governance.identity import UserContext
from kb_agent.governance.injection import scan
from kb_agent.governance.masking import install_log_masking
from kb_agent.governance.policy import Decision
from kb_agent.governance.vault import Vault
from kb_agent.ingest.indexer import Indexer, IndexReport, ProgressFn
from kb_agent.llm.base import LLM, MeteredLLM
from kb_agent.llm.embeddings import Embedder, get_embedder
from kb_agent.llm.factory import LLMTiers, build_llms
from kb_agent.retrieval.searcher import Searcher
from kb_agent.retrieval.types import Mode, SearchResponse
from kb_agent.store.access import AccessFilter
from kb_agent.store.kb import KBError, KnowledgeBase
from kb_agent.tools.base import Tool, ToolContext
from kb_agent.tools.registry import REQUIRES, default_tools
from kb_agent.tools.tasks import TaskRequest, TaskResult, ToolRunner, new_id


@dataclass
class ToolServices:
    """What tools may ask of the engine besides search: connectors and (for index_command) indexing."""

    connectors: Connectors
    index_folder: Callable[[Path, str], str]


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
    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 llm: LLM | tuple[LLM, LLM, LLM] | None = None,
                 cache_folder: Path | None = None):
        self.settings = settings or get_settings()
        self._cache_folder = cache_folder  # None: the data folder's own embedding cache
        self._embedder = embedder  # None: the configured one, loaded on first use
        # an injected model serves every tier; a (fast, main, strong) tuple sets them apart
        if isinstance(llm, tuple):
            self._llms = LLMTiers(*llm)
        else:
            self._llms = LLMTiers(llm, llm, llm) if llm is not None else None  # None: from settings, on first use
        self._tools = default_tools()
        self._runner = ToolRunner()  # one per engine: rate limits hold across questions
        self.vault = Vault(self.settings.data_folder / "vault.json")
        self.connectors = Connectors(self.settings, self.vault)
        self._kbs: dict[str, KnowledgeBase] = {}
        self.audit = AuditLog(self.settings.data_folder / "audit" / "audit.jsonl")
        install_log_masking()
        self.gate = Gate.open(self.settings.policy_file, self.settings.data_folder, self.audit)

    def llms(self) -> LLMTiers:
        if self._llms is None:
            self._llms = build_llms(self.settings)
        return self._llms

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
            self._kbs[name] = KnowledgeBase(name, self.settings, model_id=model_id, cache_folder=self._cache_folder)
        return self._kbs[name]

    def kb_names(self) -> list[str]:
        return KnowledgeBase.list_names(self.settings)

    def close(self) -> None:
        for kb in self._kbs.values():
            kb.close()
        self._kbs.clear()
        self.gate.close()

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
        self, query: str, *, access: AccessFilter | None = None, user: UserContext | None = None,
        kbs: list[str] | None = None, mode: Mode = "hybrid", k: int = 10, hops: int = 1,
    ) -> SearchResponse:
        """Search as a user (policy decides KBs and ACL groups), or with an explicit filter (internal use)."""
        if access is None:
            user = user or UserContext.local_owner()
            trace_id = new_id()
            decision, _ = self.gate.enter(user, kbs or [self.settings.default_kb], trace_id=trace_id, action="search")
            access = self.gate.access(decision)
        return self.searcher(kbs).search(query, access=access, mode=mode, k=k, hops=hops)


    # -- tools ------------------------------------------------------------------------------------
    def identify(self, user_id: str | None = None, *, groups: list[str] | None = None) -> UserContext:
        """A named user as the policy knows them (no policy: the local owner, or the given groups)."""
        if user_id is None:
            return UserContext.local_owner() if groups is None else UserContext(user_id="cli", groups=groups)
        return self.gate.policy.identify(user_id, groups=groups)

    def tools_for(self, user: UserContext | None = None, *, agent: bool = False,
                  decision: Decision | None = None) -> dict[str, Tool]:
        """The Tool Cards this caller may see: allowed by the policy, connector configured; the agent never
        writes. Anything else a caller (or a model) names is refused by the runner."""
        decision = decision or self.gate.policy.decide(user or UserContext.local_owner())
        configured = self.connectors.configured()
        return {name: tool for name, tool in self._tools.items()
                if decision.allows_tool(name) and REQUIRES.get(name, "") in configured | {""}
                and not (agent and "kb.write" in tool.auth_scope)}

    def tool_context(self, user: UserContext, kbs: list[str] | None = None,
                     decision: Decision | None = None) -> ToolContext:
        decision = decision or self.gate.policy.decide(user)
        # named KBs must exist; the default one may not yet (connector tools and index_command need none)
        names = kbs or [n for n in [self.settings.default_kb] if KnowledgeBase.exists(n, self.settings)]
        knowledge_bases = [self.kb(n) for n in names]
        searcher = Searcher(knowledge_bases, self.settings, embedder=self.embedder) if knowledge_bases else None
        return ToolContext(self.settings, self.gate.access(decision), knowledge_bases, searcher,
                           user_id=user.user_id, groups=list(decision.acl_groups or user.groups),
                           services=ToolServices(self.connectors, self._index_folder))

    def _index_folder(self, folder: Path, kb: str) -> str:
        report = self.index([folder], kb=kb)
        return f"{len(report.added)} added, {len(report.updated)} updated, {len(report.deleted)} removed"

    def run_tool(self, name: str, args: dict, *, user: UserContext | None = None,
                 kbs: list[str] | None = None) -> TaskResult:
        """One tool call exactly as the agent makes it: same allow-list, validation, ACL, limits, audit."""
        user = user or UserContext.local_owner()
        trace_id = new_id()
        decision, _ = self.gate.enter(user, kbs or [self.settings.default_kb], trace_id=trace_id, action=f"tool:{name}")
        allowed = self.tools_for(user, decision=decision)
        request = TaskRequest(trace_id=trace_id, tool=name, input=args,
                              auth_scope=list(getattr(allowed.get(name), "auth_scope", ())))
        result = self._runner.run(request, allowed, self.tool_context(user, kbs, decision))
        self.audit.write("tool_call", {"tool": name, "args": args, "status": result.status, "error": result.error,
                                       "results": len(result.evidence), "user": user.user_id,
                                       "latency_ms": result.metrics.get("latency_ms")},
                         trace_id=result.trace_id, task_id=result.task_id)
        return result

    # -- answering ---------------------------------------------------------------------------------
    def answer_query(
        self, query: str, *, user: UserContext | None = None, history: list[dict] | None = None,
        on_event: EventFn | None = None, kbs: list[str] | None = None,
    ) -> Answer:
        """Answer from the knowledge base with path:line citations, or refuse. The stable entry point."""
        query = (query or "").strip()
        if not query:
            raise ValueError("the question is empty")
        user = user or UserContext.local_owner()
        names = kbs or [self.settings.default_kb]
        trace_id = new_id()
        decision, warning = self.gate.enter(user, names, trace_id=trace_id, action="answer")
        injection = scan(query)
        if injection:  # instructions in the question change nothing structural; recorded for review
            self.audit.write("injection_query", {"user": user.user_id, "patterns": injection}, trace_id=trace_id)
        tiers = self.llms()
        fast = MeteredLLM(tiers.fast) if tiers.fast is not None else None
        main = (fast if tiers.main is tiers.fast else MeteredLLM(tiers.main)) if tiers.main is not None else None
        # escalation only when a distinct, stronger model is configured
        strong = MeteredLLM(tiers.strong) if tiers.strong is not None and tiers.strong is not tiers.main else None
        ctx = AgentContext(
            settings=self.settings, tools=self.tools_for(user, agent=True, decision=decision),
            tool_ctx=self.tool_context(user, names, decision), fast=fast, main=main, strong=strong,
            audit=self.audit, on_event=on_event, runner=self._runner, trace_id=trace_id,
            mask_exempt=decision.mask_exempt,
        )
        state = {"query": query, "history": list(history or []), "iteration": 0, "strategy": 0, "evidence": []}
        if self.settings.mode == "tools" and main is not None:
            final = run_tool_mode(state, ctx)
        else:
            final = build_graph().invoke(state, config={"configurable": {"ctx": ctx}, "recursion_limit": 60})
        answer = _to_answer(final, ctx, [fast, main, strong], tiers.notice)
        for llm in {id(m): m for m in (fast, main, strong) if m is not None}.values():
            for call in llm.calls:
                self.audit.write("llm_call", {"model": call.model, "purpose": call.purpose, "ok": call.ok,
                                              "prompt_tokens": call.prompt_tokens,
                                              "completion_tokens": call.completion_tokens,
                                              "latency_ms": round(call.latency_ms, 1)}, trace_id=trace_id)
        self.audit.write("answer", {"user": user.user_id, "refused": answer.refused, "llm_calls": answer.llm_calls,
                                    "citations": len(answer.citations), "route": answer.route}, trace_id=trace_id)
        self.gate.budgets.add(user.user_id, sum(answer.tokens.values()) if isinstance(answer.tokens, dict) else 0)
        if warning:
            answer.notices.append(f"budget: {warning}")
        return answer

    def stream(self, query: str, **kwargs) -> Iterator[dict]:
        """Progress events (node_start / node_end / tool / token) and finally {"type": "final", "answer": ...}."""
        events: queue.Queue = queue.Queue()
        done = object()

        def run() -> None:
            try:
                answer = self.answer_query(query, on_event=events.put, **kwargs)
                events.put({"type": "final", "answer": answer})
            except Exception as exc:
                events.put({"type": "error", "error": f"{type(exc).__name__}: {exc}"})
            finally:
                events.put(done)

        threading.Thread(target=run, daemon=True).start()
        while (event := events.get()) is not done:
            yield event


def _to_answer(final: dict, ctx: AgentContext, llms: list, notice: str | None) -> Answer:
    metered = list({id(m): m for m in llms if m is not None}.values())
    usage = [m.usage() for m in metered]
    timings: dict[str, float] = {}
    for node, ms in final.get("timings", []):
        timings[node] = round(timings.get(node, 0.0) + ms, 1)
    route = final.get("route", {})
    notices = ([notice] if notice else []) + list(dict.fromkeys(final.get("notices", [])))
    return Answer(
        answer=final.get("answer", ""), citations=final.get("citations", []), refused=final.get("refused", False),
        route={k: route.get(k) for k in ("query_type", "complexity", "decided_by")},
        iterations=final.get("iteration", 0), llm_calls=sum(u["calls"] for u in usage),
        tokens={"prompt": sum(u["prompt_tokens"] for u in usage),
                "completion": sum(u["completion_tokens"] for u in usage)},
        fast_paths=final.get("fast_paths", []), timings=timings,
        planned_queries=final.get("planned_queries", []), planner_fallback=final.get("planner_fallback"),
        tool_calls=final.get("tool_history", []),
        evidence=[{"id": e.id, "path": e.path, "start_line": e.start_line, "end_line": e.end_line,
                   "doc_id": e.doc_id, "tool": e.tool, "score": e.score, "scores": e.scores}
                  for e in final.get("evidence", [])],
        notices=notices, trace_id=ctx.trace_id,
    )


def _live_pid(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid
