"""Node 2: choose tool calls. Simple questions use the routing table (no LLM call); complex ones get one
LLM call that plans 1-3 retrieval queries and the tools to run them with (seed 004 P0-1)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from pydantic import BaseModel, Field

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.question_terms import is_subject_name
from kb_agent.agent.rules import FILE_QUESTION_WORDS, TICKET_RE, URL_RE
from kb_agent.agent.state import AgentState, RouteState, ToolCall
from kb_agent.agent.step_rules import decompose, possessive_owner
from kb_agent.text.tokenize import EN_STOPWORDS, QUESTION_WORDS, ZH_STOPWORDS, cut_chinese, has_cjk, tokenize
from kb_agent.tools.base import ToolArgsError

log = logging.getLogger("kb_agent.agent")

PROMPT = """You plan searches for a company knowledge-base assistant.
Write 1 to {max_queries} short search queries that together find the facts needed to answer the question
(for multi-hop questions: one query per hop, naming the entity each hop needs), and optional extra tool calls.

Tools you may call:
{tools}

Reply with one JSON object: {{"queries": ["..."], "calls": [{{"name": "tool_name", "args": {{...}}}}]}}
"calls" may be empty: every query is run with hybrid_search."""

REFINE_PROMPT = """The evidence found so far only partly answers the question.
Evidence kept so far (summaries):
{kept}
Write 1 to {max_queries} NEW short search queries for the missing facts (do not repeat earlier queries: {tried}).
Reply with one JSON object: {{"queries": ["..."], "calls": []}}"""


class PlanDecision(BaseModel):
    queries: list[str] = Field(default_factory=list, max_length=5)
    calls: list[ToolCall] = Field(default_factory=list, max_length=8)


# seed 001 D1: query type -> preferred tools (fallback when the LLM gives nothing usable)
ROUTING_TABLE = {
    "exact": ["grep_search", "hybrid_search"],
    "conceptual": ["hybrid_search"],
    "relational": ["graph_related", "hybrid_search"],
    "file_discovery": ["local_file_qa", "grep_search", "hybrid_search"],
}


def plan(state: AgentState, config) -> AgentState:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    route = state["route"]
    query = state["query"]
    max_queries = ctx.settings.query_planner_max_queries
    refining = bool(state.get("grade", {}).get("action") == "REFINE")
    tried = [c["args"].get("query") for c in state.get("tool_history", []) if c.get("args", {}).get("query")]
    fallback_reason = None
    decision = None
    probing = bool(route.get("probe_first")) and not state.get("probed")  # the question's own search, first

    if probing:
        fallback_reason = "a long question of no multi-step shape: its own search first, the planner if it falls short"
    elif ctx.fast is not None and route.get("complexity") == "complex":
        ctx.emit({"type": "step", "label": "🧠 Planning"})
        messages = _messages(ctx, state, refining, tried, max_queries)
        decision, from_model = ctx.fast.structured(
            messages, PlanDecision, fallback=PlanDecision(), purpose="plan", max_tokens=300
        )
        if not from_model:
            fallback_reason = "planner reply invalid; used the routing table"
    elif route.get("complexity") != "complex":
        fallback_reason = "simple question: routing table, no planner call"
    else:
        fallback_reason = "no generative model: routing table"

    queries = _clean_queries((decision.queries if decision else []), max_queries)
    if probing:
        queries = [query]  # the planner's queries wait until the probe falls short
    if not queries:
        sub_questions = route.get("sub_questions") or []
        if refining:
            queries = _clean_queries([q for q in sub_questions if q not in tried], max_queries)
        else:
            queries = _clean_queries([*sub_questions, query], max_queries)
        if not queries:
            queries = [query]
        if decision is not None and fallback_reason is None:
            fallback_reason = "planner returned no queries; used the original question"
    if query not in queries and not refining and len(queries) < max_queries:
        queries = [query, *queries]  # the question itself is always a good first query

    calls = _validated(ctx, decision.calls if decision else [])
    calls += _table_calls(ctx, route, queries, query)
    done = {_key(c) for c in state.get("tool_history", [])}
    unique: dict[tuple, dict] = {}
    for call in calls:
        if _key(call) not in done:
            unique.setdefault(_key(call), call)
    pending = list(unique.values())
    if not pending:  # everything planned was already run: widen to semantic search of the question
        pending = (
            [{"name": "vector_search", "args": {"query": query, "top_k": ctx.settings.evidence_top_k}}]
            if "vector_search" in ctx.tools
            else []
        )
    update: AgentState = {
        "pending_calls": pending,
        "planned_queries": queries,
        "planner_fallback": fallback_reason,
        "timings": timed("plan", started),
    }
    step_plan = _step_plan(ctx, state, pending, refining)
    if step_plan:
        update["step_plan"] = step_plan
    return update


def _step_plan(ctx: AgentContext, state: AgentState, pending: list[dict], refining: bool) -> dict | None:
    """A bridge question's ordered steps, decided by its shape (rules a small model cannot spoil); only in the
    first round, and only when the question's own hybrid search runs (the steps are merged with it)."""
    route = state["route"]
    if not ctx.settings.multi_step or refining or state.get("steps") or state.get("strategy"):
        return None
    if route.get("query_type") in ("file_discovery", "chitchat") or route.get("complexity") == "chitchat":
        return None
    if _rule_exact(route):
        return None  # a rule found a key, path or identifier: exact lookups need no steps
    if not any(c["name"] == "hybrid_search" for c in pending):
        return None
    decomposed = decompose(state["query"])
    if decomposed and decomposed.rule == "possessive":
        owner = possessive_owner(state["query"])
        if owner and is_subject_name(owner, ctx.term_weights):
            # "FastAPI's utilities for … OAuth2 flows" in the FastAPI docs: its subject's things are what every
            # page is about, no entity to find first (step 1 had found "Starlette and Uvicorn")
            return None
    return {"steps": decomposed.steps, "rule": decomposed.rule} if decomposed else None


def _rule_exact(route: RouteState) -> bool:
    """A *rule* found a key, path or identifier (a model's "exact" is only a soft signal)."""
    return route.get("query_type") == "exact" and route.get("decided_by") not in ("llm", "fallback", None)


def _messages(ctx: AgentContext, state: AgentState, refining: bool, tried: list[str], max_queries: int) -> list[dict]:
    tools = "\n".join(
        f"- {c.name}: {c.description} args={list(c.input_schema.get('properties', {}))}"
        for c in (t.card() for t in ctx.tools.values())
    )
    system = PROMPT.format(max_queries=max_queries, tools=tools)
    user = f"Question: {state['query']}"
    sub = state["route"].get("sub_questions")
    if sub:
        user += f"\nSub-questions: {sub}"
    if refining:
        kept = "\n".join(f"- [{e.path}] {e.text[:200]}" for e in state.get("evidence", [])[:6]) or "- (none)"
        user += "\n" + REFINE_PROMPT.format(kept=kept, tried=tried[:6], max_queries=max_queries)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _clean_queries(queries: list[str], limit: int) -> list[str]:
    out: list[str] = []
    for q in queries:
        q = " ".join(str(q).split())[:300]
        if q and q.lower() not in (o.lower() for o in out):
            out.append(q)
    return out[:limit]


def _validated(ctx: AgentContext, calls: list[ToolCall]) -> list[dict]:
    valid = []
    for call in calls:
        tool = ctx.tools.get(call.name)
        if tool is None:
            log.info("plan: dropped call to unavailable tool %r", call.name)
            continue
        try:
            args = tool.validate(call.args).model_dump(exclude_none=True)
        except ToolArgsError as exc:
            log.info("plan: dropped invalid call (%s)", exc)
            continue
        valid.append({"name": call.name, "args": args})
    return valid


def _table_calls(ctx: AgentContext, route: RouteState, queries: list[str], question: str = "") -> list[dict]:
    """Run each planned query with the route's first available search tool; exact routes also grep."""
    preferred = [t for t in (route.get("suggested_tools") or []) if t in ctx.tools]
    preferred += [t for t in ROUTING_TABLE.get(route.get("query_type", "conceptual"), []) if t in ctx.tools]
    search_tools = [t for t in dict.fromkeys(preferred) if t in ("hybrid_search", "vector_search", "grep_search")]
    primary = next((t for t in search_tools if t != "grep_search"), None) or (
        "hybrid_search" if "hybrid_search" in ctx.tools else None
    )
    k = ctx.settings.evidence_top_k
    calls: list[dict[str, Any]] = (
        [{"name": primary, "args": {"query": q, "top_k": k}} for q in queries] if primary else []
    )
    # the first query (usually the question) also follows documents its top passages name - except when a
    # rule found an exact key/path/identifier (a model's query_type is only a soft signal: measured, the
    # 1.5B router calls many multi-hop questions "exact" and recall@5 fell from 0.95 to 0.82)
    if (
        calls
        and ctx.settings.search_hops > 1
        and route.get("query_type") != "file_discovery"
        and not _rule_exact(route)
    ):
        calls[0]["args"]["hops"] = ctx.settings.search_hops
    calls[:0] = _file_calls(ctx, route, question or (queries[0] if queries else ""))
    calls[:0] = _graph_calls(ctx, route, queries[0] if queries else "")
    if "web_fetch" in ctx.tools:  # a URL in the user's own question: read that page (live)
        calls[:0] = [{"name": "web_fetch", "args": {"url": url}} for url in URL_RE.findall(question)[:2]]
    if "grep_search" in search_tools:
        for keyword in (route.get("grep_keywords") or [])[:3] or queries[:1]:
            calls.append({"name": "grep_search", "args": {"query": keyword, "top_k": k}})
    return calls


_NOT_A_NAME = EN_STOPWORDS | QUESTION_WORDS | FILE_QUESTION_WORDS


def _file_calls(ctx: AgentContext, route: RouteState, question: str) -> list[dict]:
    """File discovery and file-path questions first look the file up by name (seed 001 D1): a path, or the two
    rarest words that could name a file (a word that names no file costs a refused lookup, nothing more)."""
    if "local_file_qa" not in ctx.tools:
        return []
    paths = [k for k in route.get("grep_keywords") or [] if "/" in k or "." in k.strip(".")]
    if paths:
        patterns = paths[:1]
    elif route.get("query_type") == "file_discovery":
        words = cut_chinese(question) if has_cjk(question) else re.split(r"[\s?？,，。.!！]+", question)
        names = [w.strip("\"'`,.;:!?()？，。") for w in words]
        names = [w for w in names if len(w) > 1 and w.lower() not in _NOT_A_NAME and w not in ZH_STOPWORDS]
        patterns = _rarest(ctx, list(dict.fromkeys(names)))[:2]
    else:
        return []
    return [{"name": "local_file_qa", "args": {"pattern": p[:300], "question": question[:1000]}} for p in patterns]


def _rarest(ctx: AgentContext, words: list[str]) -> list[str]:
    """The words most likely to name a file, rarest in the knowledge base first (longest first without its
    statistics): "mount a Flask app inside a FastAPI application" looks up "mount" and "Flask", not the longer
    "application" every page about apps is named by."""
    rarity: dict[str, float] = {}
    if ctx.term_weights is not None and words:
        try:
            parts = {w: tokenize(w) for w in words}
            weights = ctx.term_weights(set().union(*map(set, parts.values())))
            rarity = {w: max((weights.get(t, 0.0) for t in ts), default=0.0) for w, ts in parts.items()}
        except Exception:  # statistics are a refinement: the longest words without them
            rarity = {}
    return sorted(words, key=lambda w: (-rarity.get(w, 0.0), -len(w)))


def _graph_calls(ctx: AgentContext, route: RouteState, question: str) -> list[dict]:
    """Ticket keys (and relational questions naming one) look the entity up in the knowledge graph first."""
    tickets = list(dict.fromkeys(TICKET_RE.findall(question)))[:2]
    calls = []
    if "graph_related" in ctx.tools:
        entities = tickets or (
            [k for k in route.get("grep_keywords") or [] if k][:1] if route.get("query_type") == "relational" else []
        )
        calls += [{"name": "graph_related", "args": {"entity": e, "depth": 1}} for e in entities]
    if "jira_fetch" in ctx.tools:  # the live ticket too, when Jira is connected
        calls += [{"name": "jira_fetch", "args": {"key": key}} for key in tickets]
    return calls


def _key(call: dict) -> tuple:
    return call["name"], tuple(sorted((k, str(v)) for k, v in call.get("args", {}).items()))
