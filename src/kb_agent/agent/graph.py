"""The agent graph, as in the seeds:

START → analyze_and_route ─chitchat→ synthesize
                          └→ plan → tool_exec ─simple→ synthesize
                                              ├weak probe→ analyze_and_route (the router decides now)
                                              └→ grade_evidence ─GENERATE→ synthesize
                                                                ├REFINE→ plan (keeps high-score evidence)
                                                                └RE_RETRIEVE→ analyze_and_route (new strategy)
synthesize → masking → END        (loops are capped by KB_AGENT_MAX_ITERATIONS)
"""

from __future__ import annotations

import time
from functools import lru_cache, wraps

from langgraph.graph import END, START, StateGraph

from kb_agent.agent.analyze_and_route import analyze_and_route
from kb_agent.agent.grade_evidence import grade_evidence
from kb_agent.agent.masking import masking
from kb_agent.agent.plan import plan
from kb_agent.agent.state import AgentState
from kb_agent.agent.synthesize import synthesize
from kb_agent.agent.tool_exec import tool_exec


def route_after_analyze(state: AgentState) -> str:
    complexity = state["route"].get("complexity")
    if complexity == "chitchat" or (complexity == "simple" and state.get("probed") and state.get("evidence")):
        return "synthesize"  # (routed after a probe: its evidence is the simple route's search)
    return "plan"


def route_after_tool_exec(state: AgentState) -> str:
    route = state["route"]
    if route.get("complexity") == "simple":
        return "synthesize"
    if route.get("probe_first") and state.get("probed"):
        return "analyze_and_route"  # the probe's first hop was weak: the router decides
    return "grade_evidence"


def route_after_grade(state: AgentState) -> str:
    return {"GENERATE": "synthesize", "REFINE": "plan", "RE_RETRIEVE": "analyze_and_route"}[state["grade"]["action"]]


def _observed(name: str, node):
    """Emit node start/finish events (the CLI, TUI and SSE stream show the agent's steps)."""

    @wraps(node)
    def run(state, config):
        ctx = config["configurable"]["ctx"]
        ctx.emit({"type": "node_start", "node": name})
        started = time.perf_counter()
        update = node(state, config)
        ms = round((time.perf_counter() - started) * 1000, 1)
        ctx.emit({"type": "node_end", "node": name, "ms": ms})
        ctx.record("node", {"node": name, "ms": ms}, task_id=f"node:{name}")
        return update

    return run


@lru_cache(maxsize=1)
def build_graph():
    graph = StateGraph(AgentState)
    for name, node in (
        ("analyze_and_route", analyze_and_route),
        ("plan", plan),
        ("tool_exec", tool_exec),
        ("grade_evidence", grade_evidence),
        ("synthesize", synthesize),
        ("masking", masking),
    ):
        graph.add_node(name, _observed(name, node))
    graph.add_edge(START, "analyze_and_route")
    graph.add_conditional_edges("analyze_and_route", route_after_analyze, ["plan", "synthesize"])
    graph.add_edge("plan", "tool_exec")
    graph.add_conditional_edges(
        "tool_exec", route_after_tool_exec, ["synthesize", "grade_evidence", "analyze_and_route"]
    )
    graph.add_conditional_edges("grade_evidence", route_after_grade, ["synthesize", "plan", "analyze_and_route"])
    graph.add_edge("synthesize", "masking")
    graph.add_edge("masking", END)
    return graph.compile()
