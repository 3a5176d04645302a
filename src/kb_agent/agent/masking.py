"""Node 6: mask sensitive values in everything that leaves: the answer and the citation snippets."""

from __future__ import annotations

import time

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.state import AgentState
from kb_agent.governance.masking import mask_text


def masking(state: AgentState, config) -> dict:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    answer, counts = mask_text(state.get("answer", ""), exempt=ctx.mask_exempt)
    citations = []
    for citation in state.get("citations", []):
        snippet, more = mask_text(citation.get("snippet", ""), exempt=ctx.mask_exempt)
        for kind, n in more.items():
            counts[kind] = counts.get(kind, 0) + n
        citations.append({**citation, "snippet": snippet})
    if counts and ctx.audit is not None:
        ctx.audit.write("masked", {"counts": counts}, trace_id=ctx.trace_id)
    return {"answer": answer, "citations": citations, "timings": timed("masking", started)}
