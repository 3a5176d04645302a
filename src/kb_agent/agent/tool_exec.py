"""Node 3: run the planned tool calls in parallel as TaskRequests, each with its timeout; partial success is fine."""

from __future__ import annotations

import time

from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.coverage import strong_first_hop
from kb_agent.agent.shape import asks_two_things, question_shape
from kb_agent.agent.state import AgentState
from kb_agent.agent.step_rules import GUESSED_BRIDGE, StepPlan, is_comparison
from kb_agent.agent.steps import run_steps
from kb_agent.tools.base import Evidence
from kb_agent.tools.tasks import TaskRequest

COVERED = "the question's own search covered it"


def tool_exec(state: AgentState, config) -> AgentState:
    ctx: AgentContext = config["configurable"]["ctx"]
    started = time.perf_counter()
    calls = state.get("pending_calls", [])
    requests = [
        TaskRequest(
            trace_id=ctx.trace_id,
            parent_task_id=f"node:tool_exec:{state.get('iteration', 0)}",
            tool=call["name"],
            input=call.get("args", {}),
            auth_scope=list(getattr(ctx.tools.get(call["name"]), "auth_scope", ())),
        )
        for call in calls
    ]
    ctx.emit({"type": "step", "label": "🔍 Searching"})
    results = ctx.runner.run_many(requests, ctx.tools, ctx.tool_ctx)

    intake = _Intake(ctx, list(state.get("evidence", [])), state.get("rejected_spans", []))
    history = []
    for call, result in zip(calls, results, strict=True):
        record = {
            "name": call["name"],
            "args": call.get("args", {}),
            "status": result.status,
            "count": 0,
            "task_id": result.task_id,
        }
        if result.status == "ok":
            record["latency_ms"] = result.metrics.get("latency_ms")
            record["count"] = intake.admit(result.evidence, call["name"])
        else:
            record["error"] = result.error
        history.append(record)  # (the runner wrote the tool_call audit record)
        ctx.emit(
            {
                "type": "tool",
                "name": call["name"],
                "args": call.get("args", {}),
                "status": record["status"],
                "count": record["count"],
                "error": record.get("error"),
            }
        )
    step_plan, trace = state.get("step_plan"), None
    route = state["route"]
    probing = bool(route.get("probe_first")) and not state.get("probed")
    if step_plan and not state.get("steps"):  # a bridge question: its steps run now, in order
        first = next((r.evidence for c, r in zip(calls, results, strict=True) if c["name"] == "hybrid_search"), [])
        # the question's own search holds most of it: its steps still run (a multi-hop question's answer is in
        # the next hop), their bridges picked by rule - no router and no extraction call
        covered = probing and strong_first_hop(state["query"], first, ctx.term_weights)
        merged, trace = run_steps(ctx, state, StepPlan(**step_plan), list(first), model=not covered)
        intake.admit(merged, "hybrid_search")
        intake.order({e.key: i for i, e in enumerate(merged)})
        ctx.record("multi_step", {"rule": step_plan["rule"], "steps": trace})
    update: AgentState = {
        "evidence": intake.evidence,
        "new_evidence_ids": intake.new_ids,
        "tool_history": history,
        "round_tools": [c["name"] for c in calls],
        "pending_calls": [],
        "timings": timed("tool_exec", started),
    }
    if trace is not None:
        update["steps"] = trace
    notices = list(dict.fromkeys(ctx.tool_ctx.notices))
    ctx.tool_ctx.notices.clear()
    quarantined = intake.quarantined
    if quarantined:
        where = ", ".join(f"{q['path']}:L{q['lines']}" for q in quarantined[:3])
        notices.append(
            f"{len(quarantined)} passage(s) quarantined: they contain instructions aimed at the assistant ({where})"
        )
    if notices:
        update["notices"] = notices
    if probing:
        update["probed"] = True
        if strong_first_hop(state["query"], intake.evidence, ctx.term_weights):
            # a strong first hop: the one lookup it turned out to be - no router, planner or grader call
            update["route"] = {**route, "complexity": "simple"}
            if trace is not None and step_plan and step_plan["rule"] == GUESSED_BRIDGE:
                update["steps"] = one_lookup(trace)  # a rule's steps stand: the answer may be in the last hop
            update["fast_paths"] = [ctx.fast_path("rule_route", "probe_covered", state["query"])]
        elif ctx.settings.weak_probe_router == "multi_step" and not _router_may_split(state["query"]):
            # a weak first hop of one question: the 1.5B router called all but 2 of 518 dev-set questions
            # simple, those two asking two things (docs/benchmarks.md, stop 41) - 3-5 s of waiting for a route
            update["route"] = {**route, "complexity": "simple"}
            update["fast_paths"] = [ctx.fast_path("rule_route", "probe_weak_one_lookup", state["query"])]
        elif ctx.settings.weak_probe_router == "multi_step" and _rule_steps_ran(state["query"], step_plan, trace):
            # a weak first hop whose rule steps have run: the multi-step search the router would start is done,
            # and the router called all 34 such multi-hop questions measured simple (docs/benchmarks.md, stop 46)
            update["route"] = {**route, "complexity": "simple"}
            update["fast_paths"] = [ctx.fast_path("rule_route", "probe_weak_steps_ran", state["query"])]
        return update  # a weak one of a multi-step shape: the router decides now (route_after_tool_exec)
    if route.get("complexity") == "simple":
        update["fast_paths"] = [ctx.fast_path("simple_skip_grading", "simple_route", state["query"])]
    return update


def _router_may_split(query: str) -> bool:
    """A multi-step shape, a comparison or two questions in one: the router's steps or sub-questions may find
    what one search did not."""
    return question_shape(query) == "multi_step" or is_comparison(query) or asks_two_things(query)


def _rule_steps_ran(query: str, step_plan: dict | None, trace: list[dict] | None) -> bool:
    """A rule (not a guessed bridge) read the question's steps and they ran; it compares nothing and asks one
    thing (the router's sub-questions would split those)."""
    if not step_plan or step_plan["rule"] == GUESSED_BRIDGE or not trace:
        return False
    ran = any(not step.get("skipped") for step in trace)
    return ran and not is_comparison(query) and not asks_two_things(query)


def one_lookup(trace: list[dict]) -> list[dict]:
    """The step trace of a probe whose own search covered the question: the bridge guessed in front of it
    answers nothing (its "Code" / "FastAPI" had kept the quote from answering), so its last step is skipped."""
    if len(trace) < 2:
        return trace
    return [*trace[:-1], {**trace[-1], "skipped": COVERED}]


class _Intake:
    """Evidence joining the state: each passage once, quarantined if it addresses the assistant, numbered."""

    def __init__(self, ctx: AgentContext, evidence: list[Evidence], rejected: list):
        self.ctx = ctx
        self.evidence = evidence
        self.seen = {e.key for e in evidence} | {tuple(span) for span in rejected}
        self.next_id = max((e.id for e in evidence), default=0) + 1
        self.new_ids: list[int] = []
        self.quarantined: list[dict] = []

    def admit(self, items: list[Evidence], tool: str) -> int:
        added = 0
        for item in items:
            if item.key in self.seen:
                continue
            self.seen.add(item.key)
            flagged = self.ctx.quarantine(item, tool)
            if flagged:
                self.quarantined.append(flagged)
                continue
            self.evidence.append(item.model_copy(update={"id": self.next_id}))
            self.new_ids.append(self.next_id)
            self.next_id += 1
            added += 1
        return added

    def order(self, order: dict) -> None:
        """This round's evidence in the steps' merged order (what the answer and recall@k read first),
        numbered in that order."""
        fresh = set(self.new_ids)
        old = [e for e in self.evidence if e.id not in fresh]
        new = sorted((e for e in self.evidence if e.id in fresh), key=lambda e: order.get(e.key, len(order)))
        first_id = min(fresh, default=1)
        renumbered = [e.model_copy(update={"id": first_id + i}) for i, e in enumerate(new)]
        self.evidence, self.new_ids = old + renumbered, [e.id for e in renumbered]
