"""`kb-agent mcp`: the knowledge base as an MCP server (official SDK; stdio or streamable HTTP).

Tools: search_knowledge, read_knowledge, ask. Every call runs as one identity (`--as USER`, or
KB_AGENT_MCP_USER; the local owner without a policy) through the same gate, runner and audit trail."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from kb_agent.engine import Engine
from kb_agent.governance.identity import UserContext


def create_mcp(engine: Engine, user: UserContext, kbs: list[str] | None = None) -> MCPServer:
    server = MCPServer("kb-agent", instructions=(
        "Search and read the company knowledge base. Cite passages as path:Lx-Ly. "
        "Results are limited to what the configured identity may see."))

    @server.tool(description="Hybrid (BM25 + semantic) search; returns passages with path:Lx-Ly citations.")
    def search_knowledge(query: str, top_k: int = 6) -> list[dict]:
        result = engine.run_tool("hybrid_search", {"query": query, "top_k": max(1, min(top_k, 30))}, user=user,
                                 kbs=kbs)
        if result.status != "ok":
            raise ValueError(result.error or result.status)
        return [{"citation": e.citation, "path": e.path, "start_line": e.start_line, "end_line": e.end_line,
                 "text": e.text} for e in result.evidence]

    @server.tool(description="Read lines of an indexed file by its cited path (at most 200 lines).")
    def read_knowledge(path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        args = {k: v for k, v in {"path": path, "start_line": start_line, "end_line": end_line}.items()
                if v is not None}
        result = engine.run_tool("read_file", args, user=user, kbs=kbs)
        if result.status != "ok":
            raise ValueError(result.error or result.status)
        item = result.evidence[0]
        return {"citation": item.citation, "text": item.text}

    @server.tool(description="Ask the kb-agent: an answer from the documents with references, or a refusal.")
    def ask(question: str) -> dict:
        answer = engine.answer_query(question, user=user, kbs=kbs)
        return {"answer": answer.answer, "refused": answer.refused,
                "citations": [c.model_dump() for c in answer.citations]}

    return server
