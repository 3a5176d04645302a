"""KB_AGENT_MODE=tools (seed 004 P0-3): the model drives retrieval itself with two tools,
search_knowledge(query, top_k) and read_knowledge(refs), then answers citing the refs it read.
Native function calling where the backend has it; a JSON reply protocol otherwise."""

from __future__ import annotations

import json
import re
import time

from pydantic import BaseModel, Field

from kb_agent.agent.anchors import question_anchors, question_names
from kb_agent.agent.citations import CheckedAnswer, refusal, with_references
from kb_agent.agent.context import AgentContext, timed
from kb_agent.agent.masking import masking
from kb_agent.llm.base import LLMError, extract_json
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence, ToolArgsError
from kb_agent.tools.tasks import TaskRequest

MAX_STEPS = 4
SYSTEM = """You answer questions from a company knowledge base, using tools:
- search_knowledge(query, top_k): returns passages, each with a ref like "R3" and a short preview
- read_knowledge(refs): returns the full text of passages by ref
Search, read what looks relevant, then answer ONLY from what you read, citing refs like [R3].
If nothing relevant is found, say the knowledge base does not contain the answer.
{protocol}"""
JSON_PROTOCOL = """Reply with exactly one JSON object per turn:
{"tool": "search_knowledge", "args": {"query": "...", "top_k": 5}} or
{"tool": "read_knowledge", "args": {"refs": ["R1", "R2"]}} or
{"answer": "your answer with [R1] citations"}"""
TOOL_SPECS = [
    {
        "type": "function",
        "function": {
            "name": "search_knowledge",
            "description": "Search the knowledge base.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 10}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_knowledge",
            "description": "Read passages by ref.",
            "parameters": {
                "type": "object",
                "properties": {"refs": {"type": "array", "items": {"type": "string"}}},
                "required": ["refs"],
            },
        },
    },
]
_REF = re.compile(r"\[R(\d+)\]")


class SearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500)
    top_k: int = Field(default=5, ge=1, le=10)


class ReadArgs(BaseModel):
    refs: list[str] = Field(min_length=1, max_length=10)


def run_tool_mode(state: dict, ctx: AgentContext) -> dict:
    started = time.perf_counter()
    query = state["query"]
    llm = ctx.main
    assert llm is not None  # the engine answers extractively, without tool mode, when there is no model
    native = llm.supports_tools
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM.format(protocol="" if native else JSON_PROTOCOL)},
        {"role": "user", "content": query},
    ]
    evidence: dict[int, Evidence] = {}
    history: list[dict] = []
    answer_text = ""
    for _step in range(MAX_STEPS):
        try:
            if native:
                completion = llm.complete(messages, purpose="tool_mode", tools=TOOL_SPECS)
                calls = [(c["name"], _loads(c["arguments"])) for c in completion.tool_calls]
                if not calls:
                    answer_text = completion.text
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": completion.text or "",
                        "tool_calls": [
                            {
                                "id": c["id"],
                                "type": "function",
                                "function": {"name": c["name"], "arguments": c["arguments"]},
                            }
                            for c in completion.tool_calls
                        ],
                    }
                )
            else:
                reply = llm.chat(messages, purpose="tool_mode", json_schema={"type": "object"})
                try:
                    data = extract_json(reply)
                except ValueError:
                    data = {"answer": reply}
                if not isinstance(data, dict) or "answer" in data or "tool" not in data:
                    answer_text = str(data.get("answer", reply)) if isinstance(data, dict) else reply
                    break
                calls = [(str(data["tool"]), data.get("args") or {})]
                messages.append({"role": "assistant", "content": reply})
        except LLMError as exc:
            ctx.emit({"type": "error", "error": str(exc)})
            break
        for index, (name, args) in enumerate(calls):
            result = _run(name, args, ctx, evidence, history)
            ctx.emit(
                {
                    "type": "tool",
                    "name": name,
                    "args": args,
                    "status": history[-1]["status"],
                    "count": history[-1]["count"],
                    "error": history[-1].get("error"),
                }
            )
            if native:
                messages.append({"role": "tool", "tool_call_id": completion.tool_calls[index]["id"], "content": result})
            else:
                messages.append({"role": "user", "content": f"Tool result:\n{result}"})
    sources = list(evidence.values())
    position = {e.id: n for n, e in enumerate(sources, start=1)}
    text = _REF.sub(lambda m: f"[{position[int(m.group(1))]}]" if int(m.group(1)) in position else "", answer_text)
    # the same claim check as graph mode: the model's sentences must be stated by their lines and be about the
    # names and subject words the question asks about
    checked = CheckedAnswer(sources, query, *question_anchors(ctx, query), question_names(ctx, query))
    body = checked.add_text(text, written=True) if text else ""
    refused = not checked.kept
    if refused:
        body = refusal(has_cjk(query), sources)
    ctx.emit({"type": "token", "text": body})
    final = {
        **state,
        "answer": with_references(body, checked.citations) if not refused else body,
        "citations": checked.citations if not refused else [],
        "claims": checked.public_claims(),
        "refused": refused,
        "route": {"query_type": "tools_mode", "complexity": "tools", "decided_by": "tools_mode"},
        "evidence": sources,
        "tool_history": history,
        "iteration": len(history),
        "timings": [*timed("tool_mode", started)],
        "fast_paths": [],
        "notices": [],
    }
    masked = masking(final, {"configurable": {"ctx": ctx}})  # type: ignore[arg-type]  # a complete final state
    final.update(answer=masked["answer"], citations=masked["citations"])
    final["timings"] += masked["timings"]
    return final


def _run(name: str, args: dict, ctx: AgentContext, evidence: dict[int, Evidence], history: list[dict]) -> str:
    record = {"name": name, "args": args, "status": "error", "count": 0}
    history.append(record)
    try:
        if name == "search_knowledge":
            search = SearchArgs.model_validate(args)
            # through the runner: the caller's allow-list, limits and timeout apply as in graph mode
            result = ctx.runner.run(
                TaskRequest(
                    trace_id=ctx.trace_id, tool="hybrid_search", input={"query": search.query, "top_k": search.top_k}
                ),
                ctx.tools,
                ctx.tool_ctx,
            )
            if result.status != "ok":
                raise ToolArgsError(result.error or result.status)
            items = [item for item in result.evidence if ctx.quarantine(item, "search_knowledge") is None]
            lines = []
            for item in items:
                found = next((e for e in evidence.values() if e.key == item.key), None)
                known = found or item.model_copy(update={"id": len(evidence) + 1})
                evidence[known.id] = known
                lines.append(f"R{known.id} ({known.citation}): {' '.join(known.text.split())[:200]}")
            record.update(status="ok", count=len(items))
            return "\n".join(lines) or "no results"
        if name == "read_knowledge":
            parsed = ReadArgs.model_validate(args)
            out = []
            for ref in parsed.refs:
                match = re.fullmatch(r"R?(\d+)", ref.strip())
                ref_item = evidence.get(int(match.group(1))) if match else None
                out.append(
                    f"R{ref_item.id} ({ref_item.citation}):\n{ref_item.text}" if ref_item else f"{ref}: unknown ref"
                )
            record.update(status="ok", count=len(out))
            return "\n\n".join(out)
        error = record["error"] = f"unknown tool {name!r}"
        return error
    except (ValueError, ToolArgsError) as exc:
        record["error"] = str(exc)[:300]
        return f"error: {record['error']}"


def _loads(arguments: str) -> dict:
    try:
        data = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
