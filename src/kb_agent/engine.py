"""The Engine: the one object every interface (CLI, TUI, HTTP server, MCP) talks to. Each public method
opens a governed request at the gate (decision, audit, budget, outbound filter) before it does anything."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kb_agent.agent.answer import Answer, to_answer
from kb_agent.agent.context import AgentContext, EventFn
from kb_agent.agent.graph import build_graph
from kb_agent.agent.rules import URL_RE
from kb_agent.agent.tool_mode import run_tool_mode
from kb_agent.config import Settings, get_settings
from kb_agent.connectors.services import Connectors
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.acl_explain import explain
from kb_agent.governance.audit import AuditLog, VerifyReport
from kb_agent.governance.errors import NotFound, Unavailable, UpstreamError
from kb_agent.governance.gate import Gate
from kb_agent.governance.identity import UserContext
from kb_agent.governance.injection import scan
from kb_agent.governance.masking import install_log_masking
from kb_agent.governance.policy import Decision
from kb_agent.governance.request import Request
from kb_agent.governance.vault import Vault
from kb_agent.ingest.embedding import embed_pending
from kb_agent.ingest.indexer import Indexer, IndexReport, ProgressFn
from kb_agent.llm.base import LLM, LLMError, MeteredLLM
from kb_agent.llm.embeddings import Embedder, get_embedder
from kb_agent.llm.factory import LLMTiers, build_llms
from kb_agent.retrieval.searcher import MODES as SEARCH_MODES
from kb_agent.retrieval.searcher import Searcher
from kb_agent.retrieval.types import Mode, SearchResponse
from kb_agent.store.backends import knowledge_base_exists, knowledge_base_names, open_knowledge_base, store_health
from kb_agent.store.base import KBNotFound, KnowledgeBase
from kb_agent.tools.base import Tool, ToolContext
from kb_agent.tools.registry import REQUIRES, default_tools
from kb_agent.tools.tasks import TaskRequest, TaskResult, ToolRunner

__all__ = ["SEARCH_MODES", "Engine", "KBStatus", "Mode", "ToolServices"]


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
    translated_pages: int = 0  # Chinese/English page pairs the lexicon learned from
    lexicon_words: int = 0  # Chinese words it translates

    @property
    def coverage(self) -> float:
        return 1.0 if self.chunks == 0 else self.embedded / self.chunks

    def as_dict(self) -> dict:
        return {
            "kb": self.name,
            "files": self.files,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "dense_coverage": round(self.coverage, 4),
            "embedding_model": self.model,
            "roots": [{"path": r, "acl": a} for r, a in self.roots.items()],
            "embed_worker_pid": self.worker_pid,
            "translated_pages": self.translated_pages,
            "lexicon_words": self.lexicon_words,
        }


class Engine:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        llm: LLM | tuple[LLM, LLM, LLM] | None = None,
        cache_folder: Path | None = None,
    ):
        self.settings = settings or get_settings()
        self._cache_folder = cache_folder  # None: the data folder's own embedding cache
        self._embedder = embedder  # None: the configured one, loaded on first use
        # an injected model serves every tier; a (fast, main, strong) tuple sets them apart
        if isinstance(llm, tuple):
            self._llms: LLMTiers | None = LLMTiers(*llm)
        else:
            self._llms = LLMTiers(llm, llm, llm) if llm is not None else None  # None: from settings, on first use
        self._tools = default_tools()
        self._runner = ToolRunner()  # one per engine: rate limits hold across questions
        self.vault = Vault(self.settings.data_folder / "vault.json")
        self.connectors = Connectors(self.settings, self.vault)
        self._kbs: dict[str, KnowledgeBase] = {}
        key = self.settings.audit_key.get_secret_value() if self.settings.audit_key else None
        self.audit = AuditLog(self.settings.data_folder / "audit" / "audit.jsonl", key=key)
        install_log_masking()
        self.gate = Gate.open(self.settings.policy_file, self.settings.data_folder, self.audit)

    def llms(self) -> LLMTiers:
        if self._llms is None:
            self._llms = build_llms(self.settings)
        return self._llms

    @property
    def single_user(self) -> bool:
        """No policy file: the local owner may do everything."""
        return self.gate.policy.single_user

    def model_name(self) -> str:
        tiers = self.llms()
        return tiers.main.model if tiers.main is not None else "none (extractive answers)"

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # -- knowledge bases ---------------------------------------------------------------------------
    def kb(self, name: str | None = None, *, create: bool = False) -> KnowledgeBase:
        name = name or self.settings.default_kb
        if name not in self._kbs:
            if not create and not knowledge_base_exists(name, self.settings):
                known = ", ".join(knowledge_base_names(self.settings)) or "none yet"
                raise KBNotFound(f"knowledge base {name!r} does not exist (known: {known}); run `kb-agent index`")
            model_id = self._embedder.model_id if self._embedder is not None else None
            self._kbs[name] = open_knowledge_base(
                name, self.settings, model_id=model_id, cache_folder=self._cache_folder
            )
        return self._kbs[name]

    def kb_names(self) -> list[str]:
        return knowledge_base_names(self.settings)

    @staticmethod
    def database(settings: Settings, action: str) -> dict:
        """`kb-agent db start|stop|status`: the embedded PostgreSQL of this machine's data folder (no caller:
        an operator's own process, like `embed`)."""
        from kb_agent.store.postgres import embedded

        if action == "start":
            embedded.start(settings)
        elif action == "stop":
            return {**embedded.status(settings), "stopped": embedded.stop(settings)}
        return embedded.status(settings)

    def store_health(self) -> dict:
        """The store backend and whether it answers (`/healthz`)."""
        return store_health(self.settings)

    def close(self) -> None:
        for kb in self._kbs.values():
            kb.close()
        self._kbs.clear()
        self.gate.close()

    # -- indexing ----------------------------------------------------------------------------------
    def index(
        self,
        paths: list[Path],
        *,
        kb: str | None = None,
        acl: list[str] | None = None,
        on_progress: ProgressFn | None = None,
        user: UserContext | None = None,
    ) -> IndexReport:
        """Index as the local operator (`user=None`) or as a remote caller, who must be an admin."""
        name = kb or self.settings.default_kb
        with self.gate.request(user or UserContext.local_owner(), [name], action="index", admin=True) as req:
            report = self._index_paths(paths, name, acl, on_progress)
            req.audit(
                "index",
                {
                    "kb": name,
                    "paths": [str(p) for p in paths],
                    "acl": acl,
                    **{k: v for k, v in report.as_dict().items() if k not in ("skipped", "warnings")},
                    "skipped": len(report.skipped),
                    "warnings": len(report.warnings),
                },
            )
            report.skipped = [(req.outbound.text(p), req.outbound.text(r)) for p, r in report.skipped]
            return report

    def _index_paths(
        self, paths: list[Path], kb: str, acl: list[str] | None = None, on_progress: ProgressFn | None = None
    ) -> IndexReport:
        return Indexer(self.kb(kb, create=True)).run(paths, acl=acl, on_progress=on_progress)

    def repair(self, kb: str | None = None, *, user: UserContext | None = None) -> list[str]:
        """`kb-agent repair`: check the KB's store files, rebuild what derives from the catalog; what was done."""
        name = kb or self.settings.default_kb
        with self.gate.request(user or UserContext.local_owner(), [name], action="index", admin=True) as req:
            done = Indexer(self.kb(name)).repair()
            req.audit("repair", {"kb": name, "done": done})
            return [req.outbound.text(line) for line in done]

    def migrate(
        self, kb: str | None = None, *, to: str = "postgres", replace: bool = False, user: UserContext | None = None
    ) -> dict:
        """`kb-agent migrate`: copy an embedded KB into PostgreSQL (vectors included, nothing re-embedded)."""
        if to != "postgres":
            raise ValueError(f"unknown migration target {to!r}: only `postgres` is supported")
        from kb_agent.store.kb import EmbeddedKnowledgeBase
        from kb_agent.store.migrate import migrate_to_postgres
        from kb_agent.store.postgres.kb import PostgresKnowledgeBase

        name = kb or self.settings.default_kb
        with self.gate.request(user or UserContext.local_owner(), [name], action="index", admin=True) as req:
            embedded = self.settings.model_copy(update={"store": "embedded"})
            if not EmbeddedKnowledgeBase.exists(name, embedded):
                raise KBNotFound(f"no embedded knowledge base {name!r} in {embedded.kbs_folder}")
            model_id = self._embedder.model_id if self._embedder is not None else None
            source = EmbeddedKnowledgeBase(name, embedded, cache_folder=self._cache_folder, model_id=model_id)
            try:
                target = PostgresKnowledgeBase(name, self.settings.model_copy(update={"store": "postgres"}),
                                               model_id=source.model_id)  # fmt: skip
                report = migrate_to_postgres(source, target, replace=replace)
            finally:
                source.close()
            req.audit("migrate", {"to": to, **report})
            return {**report, "kb": req.outbound.text(report["kb"])}  # the one text in it leaves like any other

    def remove(
        self, paths: list[Path] | None = None, *, kb: str | None = None, user: UserContext | None = None
    ) -> IndexReport:
        """Forget indexed roots (`paths`), or with `paths=None` every root that no longer exists on disk."""
        name = kb or self.settings.default_kb
        with self.gate.request(user or UserContext.local_owner(), [name], action="index", admin=True) as req:
            indexer = Indexer(self.kb(name))
            roots = indexer.missing_roots() if paths is None else paths
            report = indexer.remove(roots) if roots else IndexReport()
            req.audit(
                "remove",
                {"kb": name, "roots": [str(p) for p in roots], "files": len(report.deleted),
                 "chunks_removed": report.chunks_removed},
            )  # fmt: skip
            report.deleted = [req.outbound.text(path) for path in report.deleted]  # shown to the caller
            return report

    def embed(
        self,
        kb: str | None = None,
        *,
        on_progress: Callable[[int, int, float], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict:
        knowledge_base = self.kb(kb)
        pid_file = knowledge_base.folder / "embed.pid"
        pid_file.parent.mkdir(parents=True, exist_ok=True)  # a database-backed KB may have no local files yet
        pid_file.write_text(str(os.getpid()))
        try:
            return embed_pending(knowledge_base, self.embedder(), on_progress=on_progress, should_stop=should_stop)
        finally:
            pid_file.unlink(missing_ok=True)

    def embed_in_background(self, kb: str | None = None) -> int:
        """Start `kb-agent embed` as a detached process; returns its pid. Output goes to embed.log."""
        knowledge_base = self.kb(kb)
        knowledge_base.folder.mkdir(parents=True, exist_ok=True)
        log = open(knowledge_base.folder / "embed.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(
            [sys.executable, "-m", "kb_agent.interfaces.cli", "embed", "--kb", knowledge_base.name, "--quiet"],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "KB_AGENT_DATA_FOLDER": str(self.settings.data_folder)},
        )
        return proc.pid

    def status(self, kb: str | None = None) -> list[KBStatus]:
        names = [kb] if kb else self.kb_names()
        out = []
        for name in names:
            knowledge_base = self.kb(name)
            progress = knowledge_base.embed_progress()
            lexicon = knowledge_base.bilingual_lexicon()
            out.append(
                KBStatus(
                    name=name,
                    files=knowledge_base.catalog.count_files(),
                    chunks=progress.total,
                    embedded=progress.embedded,
                    model=knowledge_base.model_id,
                    roots=knowledge_base.catalog.roots(),
                    worker_pid=_live_pid(knowledge_base.folder / "embed.pid"),
                    translated_pages=len(lexicon.paired) // 2 if lexicon else 0,
                    lexicon_words=len(lexicon.words) if lexicon else 0,
                )
            )
        return out

    # -- retrieval ---------------------------------------------------------------------------------
    def searcher(self, kbs: list[str] | None = None) -> Searcher:
        names = kbs or [self.settings.default_kb]
        return Searcher([self.kb(n) for n in names], self.settings, embedder=self.embedder)

    def search(
        self,
        query: str,
        *,
        access: AccessFilter | None = None,
        user: UserContext | None = None,
        kbs: list[str] | None = None,
        mode: Mode = "hybrid",
        k: int = 10,
        hops: int = 1,
    ) -> SearchResponse:
        """Search as a user (policy decides KBs and ACL groups; snippets pass the outbound filter), or with an
        explicit filter (internal use: evaluation and tests, nothing leaves the process)."""
        names = kbs or [self.settings.default_kb]
        query = _question(query, "query")
        if access is not None:
            return self.searcher(names).search(query, access=access, mode=mode, k=k, hops=hops)
        with self.gate.request(user or UserContext.local_owner(), names, action="search") as req:
            response = self.searcher(names).search(query, access=req.access, mode=mode, k=k, hops=hops)
            req.audit("search", {"query": query, "mode": mode, "k": k, "results": len(response.hits)})
            hits = [h.model_copy(update={"text": req.outbound.text(h.text)}) for h in response.hits]
            return response.model_copy(update={"hits": hits, "notices": req.outbound.value(response.notices)})

    # -- tools ------------------------------------------------------------------------------------
    def identify(
        self,
        user_id: str | None = None,
        *,
        groups: list[str] | None = None,
        key_admin: bool = False,
        claims: dict | None = None,
    ) -> UserContext:
        """A named user as the policy knows them (no policy: the local owner, or the given groups)."""
        if user_id is None:
            return UserContext.local_owner() if groups is None else UserContext(user_id="cli", groups=groups)
        return self.gate.policy.identify(user_id, groups=groups, key_admin=key_admin, claims=claims)

    def tools_for(
        self, user: UserContext | None = None, *, agent: bool = False, decision: Decision | None = None
    ) -> dict[str, Tool]:
        """The Tool Cards this caller may see: allowed by the policy, connector configured; the agent never
        writes. Anything else a caller (or a model) names is refused by the runner."""
        decision = decision or self.gate.policy.decide(user or UserContext.local_owner())
        configured = self.connectors.configured()
        allowed = decision.allowed_tools(self._tools)
        return {
            name: tool
            for name, tool in self._tools.items()
            if name in allowed
            and REQUIRES.get(name, "") in configured | {""}
            and not (agent and "kb.write" in tool.auth_scope)
        }

    def tool_cards(self, user: UserContext | None = None) -> list:
        with self.gate.request(user or UserContext.local_owner(), [], action="tools_list") as req:
            return [tool.card() for tool in self.tools_for(req.user, decision=req.decision).values()]

    def tool_context(
        self, req: Request, kbs: list[str] | None = None, allowed_urls: frozenset[str] | None = None
    ) -> ToolContext:
        # named KBs must exist; the default one may not yet (connector tools and index_command need none)
        names = kbs or [n for n in [self.settings.default_kb] if knowledge_base_exists(n, self.settings)]
        knowledge_bases = [self.kb(n) for n in names]
        searcher = Searcher(knowledge_bases, self.settings, embedder=self.embedder) if knowledge_bases else None
        return ToolContext(
            self.settings,
            req.access,
            knowledge_bases,
            searcher,
            user_id=req.user.user_id,
            groups=list(req.decision.acl_groups or req.user.groups),
            services=ToolServices(self.connectors, self._index_folder),
            request=req,
            allowed_urls=allowed_urls,
        )

    def _index_folder(self, folder: Path, kb: str) -> str:
        """index_command's writer: the tool call itself was authorised and audited by its request."""
        report = self._index_paths([folder], kb)
        return f"{len(report.added)} added, {len(report.updated)} updated, {len(report.deleted)} removed"

    def run_tool(
        self, name: str, args: dict, *, user: UserContext | None = None, kbs: list[str] | None = None
    ) -> TaskResult:
        """One tool call exactly as the agent makes it: same allow-list, validation, ACL, limits, audit; what
        it returns passes the outbound filter."""
        names = kbs or [self.settings.default_kb]
        with self.gate.request(user or UserContext.local_owner(), names, action=f"tool:{name}") as req:
            allowed = self.tools_for(req.user, decision=req.decision)
            task = TaskRequest(
                trace_id=req.trace_id,
                tool=name,
                input=args,
                auth_scope=list(getattr(allowed.get(name), "auth_scope", ())),
            )
            result = self._runner.run(task, allowed, self.tool_context(req, kbs))
            return result.model_copy(
                update={
                    "error": req.outbound.text(result.error) if result.error else None,
                    "evidence": [e.model_copy(update={"text": req.outbound.text(e.text)}) for e in result.evidence],
                }
            )

    def explain_acl(self, path: str, *, kb: str | None = None, user: UserContext | None = None) -> dict:
        """Who may read an indexed file, where its ACL comes from, and this user's verdict with the reason."""
        knowledge_base = self.kb(kb)
        with self.gate.request(user or UserContext.local_owner(), [], action="acl_explain") as req:
            record = knowledge_base.catalog.file_by_path(path)
            if record is None:
                raise NotFound(f"{path!r} is not indexed in knowledge base {knowledge_base.name!r}")
            return req.outbound.value(explain(record, knowledge_base.name, req.decision))

    # -- the audit trail (operator commands) ----------------------------------------------------------
    def verify_audit(self) -> VerifyReport:
        return self.audit.verify()

    def audit_records(self, trace_id: str) -> list[dict]:
        return self.audit.records(trace_id=trace_id)

    # -- answering ---------------------------------------------------------------------------------
    def answer_query(
        self,
        query: str,
        *,
        user: UserContext | None = None,
        history: list[dict] | None = None,
        on_event: EventFn | None = None,
        kbs: list[str] | None = None,
    ) -> Answer:
        """Answer from the knowledge base with path:line citations, or refuse. The stable entry point."""
        query = _question(query)
        names = kbs or [self.settings.default_kb]
        with self.gate.request(user or UserContext.local_owner(), names, action="answer") as req:
            return self._answer(req, query, history, on_event, names)

    def stream(
        self,
        query: str,
        *,
        user: UserContext | None = None,
        history: list[dict] | None = None,
        kbs: list[str] | None = None,
    ) -> Iterator[dict]:
        """Progress events (node_start / node_end / tool / token) and finally {"type": "final", "answer": ...}.

        The request is opened before this returns: a denial or a limit raises here, not as a stream event."""
        query = _question(query)
        names = kbs or [self.settings.default_kb]
        req = self.gate.begin(user or UserContext.local_owner(), names, action="answer")
        return req.stream_in_thread(
            lambda emit: {"type": "final", "answer": self._answer(req, query, history, emit, names)}
        )

    def chat(
        self,
        message: str,
        *,
        user: UserContext | None = None,
        history: list[dict] | None = None,
        on_event: EventFn | None = None,
    ) -> str:
        """Plain chat mode (no documents): the model alone, still behind the gate, the budget and the filter."""
        message = _question(message)
        with self.gate.request(user or UserContext.local_owner(), [], action="chat") as req:
            return self._chat(req, message, history, on_event)

    def chat_stream(
        self, message: str, *, user: UserContext | None = None, history: list[dict] | None = None
    ) -> Iterator[dict]:
        message = _question(message)
        req = self.gate.begin(user or UserContext.local_owner(), [], action="chat")
        return req.stream_in_thread(lambda emit: {"type": "final", "text": self._chat(req, message, history, emit)})

    def _similarity(self, question: str, texts: list[str]) -> list[float]:
        """Cosine similarity of a question to a few texts (the extractive answer's second opinion)."""
        embedder = self.embedder()
        return [float(x) for x in embedder.embed_passages(texts) @ embedder.embed_query(question)]

    def _chat(self, req: Request, message: str, history: list[dict] | None, on_event: EventFn | None) -> str:
        main = self.llms().main
        if main is None:
            raise Unavailable("chat mode needs a generative model (`kb-agent models install`, or an API)")
        llm = req.meter(MeteredLLM(main, deadline=time.monotonic() + self.settings.max_answer_seconds))
        messages = [
            {"role": "system", "content": CHAT_SYSTEM},
            *(history or [])[-10:],
            {"role": "user", "content": message},
        ]
        masker, released, received = req.outbound.stream(), [], 0
        try:
            for piece in llm.stream(messages, purpose="chat_mode"):
                received += len(piece)
                if text := masker.feed(piece):
                    released.append(text)
                    if on_event:
                        on_event({"type": "token", "text": text})
        except LLMError as exc:  # plain chat has no evidence to fall back to: a clear 502, not a 500
            raise UpstreamError(f"the model endpoint failed: {exc}") from exc
        if not received:
            raise UpstreamError("the model endpoint answered without any text (is it an OpenAI-compatible API?)")
        if text := masker.flush():
            released.append(text)
            if on_event:
                on_event({"type": "token", "text": text})
        req.audit("chat", {"user": req.user.user_id, "chars": sum(map(len, released))})
        return "".join(released)

    def _answer(
        self, req: Request, query: str, history: list[dict] | None, on_event: EventFn | None, names: list[str]
    ) -> Answer:
        injection = scan(query)
        if injection:  # instructions in the question change nothing structural; recorded for review
            req.audit("injection_query", {"user": req.user.user_id, "patterns": injection})
        tiers = self.llms()
        deadline = time.monotonic() + self.settings.max_answer_seconds  # also cuts a call in progress
        fast = req.meter(MeteredLLM(tiers.fast, deadline=deadline)) if tiers.fast is not None else None
        main = (
            (fast if tiers.main is tiers.fast else req.meter(MeteredLLM(tiers.main, deadline=deadline)))
            if tiers.main is not None
            else None
        )
        # escalation only when a distinct, stronger model is configured
        strong = (
            req.meter(MeteredLLM(tiers.strong, deadline=deadline))
            if tiers.strong is not None and tiers.strong is not tiers.main
            else None
        )
        emit, flush = req.outbound.events(on_event)
        tool_ctx = self.tool_context(req, names, allowed_urls=frozenset(URL_RE.findall(query)))
        ctx = AgentContext(
            settings=self.settings,
            tools=self.tools_for(req.user, agent=True, decision=req.decision),
            tool_ctx=tool_ctx,
            fast=fast,
            main=main,
            strong=strong,
            request=req,
            on_event=emit,
            runner=self._runner,
            trace_id=req.trace_id,
            embed=self._similarity if any(len(kb.vectors) for kb in tool_ctx.kbs) else None,
            term_weights=lambda terms: _term_weights(tool_ctx.kbs, terms),
            held_terms=lambda terms: _held_terms(tool_ctx, terms),
            kb_chunks=lambda: sum(kb.lexical.num_docs() for kb in tool_ctx.kbs),  # asked only before a synthesis
        )
        state = {"query": query, "history": list(history or []), "iteration": 0, "strategy": 0, "evidence": []}
        if self.settings.mode == "tools" and main is not None:
            final = run_tool_mode(state, ctx)
        else:
            final = build_graph().invoke(state, config={"configurable": {"ctx": ctx}, "recursion_limit": 60})
        flush()
        answer = to_answer(final, req.trace_id, [fast, main, strong], tiers.notice)
        req.finish(
            "answer",
            {
                "user": req.user.user_id,
                "refused": answer.refused,
                "llm_calls": answer.llm_calls,
                "citations": len(answer.citations),
                "route": answer.route,
                "claims": [c.model_dump() for c in answer.claims],
            },
        )
        if req.warning:
            answer.notices.append(f"budget: {req.warning}")
        return answer.filtered(req.outbound)


CHAT_SYSTEM = "You are a helpful assistant."


def _question(text: str, what: str = "question") -> str:
    text = (text or "").strip()
    if not text:
        raise ValueError(f"the {what} is empty")
    return text


def _term_weights(kbs: list[KnowledgeBase], terms: set[str]) -> dict[str, float]:
    """Inverse document frequency of each term over the knowledge bases' chunks (BM25's own statistics)."""
    counts = dict.fromkeys(terms, 0)
    total = 0
    for kb in kbs:
        frequencies, chunks = kb.lexical.doc_freqs(sorted(terms))
        total += chunks
        for term, n in frequencies.items():
            counts[term] += n
    return {t: math.log(1 + (total + 1) / (1 + n)) for t, n in counts.items()}


def _held_terms(tool_ctx: ToolContext, terms: set[str]) -> set[str]:
    """The terms some chunk the caller may read holds, over the knowledge bases in scope."""
    held: set[str] = set()
    for kb in tool_ctx.kbs:
        held |= kb.lexical.held_terms(sorted(terms - held), tool_ctx.access)
    return held


def _live_pid(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid
