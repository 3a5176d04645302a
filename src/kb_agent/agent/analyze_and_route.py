"""Node 1: classify the question (type, complexity) and decompose it - rules first, then one LLM call."""

from __future__ import annotations

import time
from typing import cast

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.rules import route_by_rules
from kb_agent.agent.shape import question_shape
from kb_agent.agent.state import AgentState, QueryType, Route, RouteState, recent_history
from kb_agent.agent.step_rules import decompose, is_comparison

PROMPT = """You route questions for a company knowledge-base assistant. Classify the user's question.

query_type:
- exact: looks up a specific identifier, name, key, error message, setting or ticket
- conceptual: asks how/why/what something is or works
- relational: asks how things are linked (depends on, related tickets, parent/child)
- file_discovery: asks to find or list files
- chitchat: greetings, thanks, small talk - nothing to look up
complexity:
- chitchat: purely social, nothing to look up
- simple: one intent, answerable with one search
- complex: several intents, a comparison, or needs facts combined from several places (multi-hop)
sub_questions: for complex questions, 2-3 short self-contained search questions; else [].
grep_keywords: exact strings worth a literal search (identifiers, names, codes); else [].

Examples:
"hello!" -> {"query_type": "chitchat", "complexity": "chitchat", "sub_questions": [], "grep_keywords": []}
"How do I declare a request body?" -> {"query_type": "conceptual", "complexity": "simple", "sub_questions": [], "grep_keywords": []}
"Which country is the director of Inception from?" -> {"query_type": "conceptual", "complexity": "complex", "sub_questions": ["Who directed Inception?", "What is the nationality of that director?"], "grep_keywords": ["Inception"]}
"Compare path parameters and query parameters" -> {"query_type": "conceptual", "complexity": "complex", "sub_questions": ["What are path parameters?", "What are query parameters?"], "grep_keywords": []}

Reply with one JSON object with keys query_type, complexity, sub_questions, suggested_tools, grep_keywords."""

# RE_RETRIEVE switches strategy: the next attempt leans on a different kind of retrieval
_CONCEPTUAL: tuple[QueryType, list[str]] = ("conceptual", ["vector_search", "hybrid_search"])
_EXACT: tuple[QueryType, list[str]] = ("exact", ["grep_search", "hybrid_search"])
_STRATEGIES = [_CONCEPTUAL, _EXACT]  # RE_RETRIEVE round 1, 2 (and later rounds keep the last)


def _plainly_simple(ctx: AgentContext, state: AgentState, query: str) -> bool:
    """Routing by shape applies to a first question only: a follow-up needs the history read."""
    return ctx.settings.route_by_shape and not recent_history(state, 4) and question_shape(query) == "simple"


PROBED_SHAPES = ("unsure", "multi_step")


def _probe_first(ctx: AgentContext, state: AgentState, query: str) -> bool:
    """A first question that is not plainly simple: its own search runs first, without the router; the router
    is asked only when no passage holds most of its key terms (a weak first hop, issue 12; tool_exec judges it,
    before any step's extraction call). The 1.5B router took 5-9 s on a CPU to call ten of eleven long one-lookup
    questions simple. A rule's steps too: "… for a file that will be processed in the background?" took the
    router, a step extraction and the answer (3 calls, 16-22 s) for a line the question's own search found. A
    comparison without rule steps too: "Can I mix def and async def … in the same app?" is one line of the docs,
    and the router's complex route spent 8 calls and 307 s to refuse it; a comparison with steps still goes to
    the router (two things compared rarely share one passage holding most of the question)."""
    if not (ctx.settings.route_by_shape and not recent_history(state, 4) and question_shape(query) in PROBED_SHAPES):
        return False
    return decompose(query) is None or not is_comparison(query)


def analyze_and_route(state: AgentState, config) -> AgentState:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    query = state["query"]
    strategy = state.get("strategy", 0)
    update: AgentState = {}
    if strategy > 0:  # re-entry after RE_RETRIEVE: switch strategy, no LLM call
        prior: RouteState = {**state["route"]}
        query_type, tools = _STRATEGIES[min(strategy, len(_STRATEGIES)) - 1]
        if query_type == prior.get("query_type"):
            query_type, tools = _CONCEPTUAL if query_type == "exact" else _EXACT
        switched: RouteState = {
            **prior,
            "query_type": query_type,
            "suggested_tools": tools,
            "complexity": "complex",
            "decided_by": f"re_retrieve_strategy_{strategy}",
        }
        return {"route": switched, "timings": timed("analyze_and_route", started)}

    ruled = route_by_rules(query)
    if ruled is not None:
        route, rule_name = ruled
        path_type = "chitchat" if route.complexity == "chitchat" else "rule_route"
        update["fast_paths"] = [ctx.fast_path(path_type, rule_name, query)]
        decided_by = rule_name
    elif ctx.fast is not None and _plainly_simple(ctx, state, query):
        # one lookup by its shape: no router call (on a CPU that is the larger part of the wait)
        route, decided_by = Route(query_type="conceptual", complexity="simple"), "shape_simple"
        update["fast_paths"] = [ctx.fast_path("rule_route", "shape_simple", query)]
    elif ctx.fast is not None and not state.get("probed") and _probe_first(ctx, state, query):
        route, decided_by = Route(query_type="conceptual", complexity="complex"), "shape_unsure"
        update["fast_paths"] = [ctx.fast_path("rule_route", "shape_unsure", query)]
    elif ctx.fast is not None:
        ctx.emit({"type": "step", "label": "🧭 Understanding the question"})
        messages = [
            {"role": "system", "content": PROMPT},
            *recent_history(state, 4),
            {"role": "user", "content": query},
        ]
        route, from_model = ctx.fast.structured(
            messages, Route, fallback=Route(), purpose="analyze_and_route", max_tokens=300
        )
        decided_by = "llm" if from_model else "fallback"
        if not from_model:
            update["notices"] = ["routing reply was not valid JSON; treated the question as complex"]
    else:  # no generative model: one search, extractive answer
        route, decided_by = Route(query_type="conceptual", complexity="simple"), "no_llm_default"
    update["route"] = cast(RouteState, {**route.model_dump(), "decided_by": decided_by})
    if decided_by == "shape_unsure":
        update["route"]["probe_first"] = True
    elif state.get("probed"):
        update["route"]["decided_by"] = f"{decided_by}_after_probe"
    update["timings"] = timed("analyze_and_route", started)
    return update
