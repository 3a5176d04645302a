"""Node 6: everything the answer shows (its text, the citation snippets) passes the request's outbound
filter: masking with the caller's exemptions, counted for the audit trail when the request closes."""

from __future__ import annotations

import time

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.state import AgentState


def masking(state: AgentState, config) -> AgentState:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    cited = state.get("citations", [])
    shown = ctx.outbound.value({"answer": state.get("answer", ""), "snippets": [c.get("snippet", "") for c in cited]})
    return {
        "answer": shown["answer"],
        "citations": [{**c, "snippet": s} for c, s in zip(cited, shown["snippets"], strict=True)],
        "timings": timed("masking", started),
    }
