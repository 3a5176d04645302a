"""The tools the agent knows, by name."""

from __future__ import annotations

from kb_agent.tools.base import Tool
from kb_agent.tools.file_tools import LocalFileQA, ReadFile
from kb_agent.tools.graph_tools import GraphRelated
from kb_agent.tools.search_tools import GrepSearch, HybridSearch, VectorSearch


def default_tools() -> dict[str, Tool]:
    tools: list[Tool] = [HybridSearch(), VectorSearch(), GrepSearch(), LocalFileQA(), ReadFile(), GraphRelated()]
    return {tool.name: tool for tool in tools}
