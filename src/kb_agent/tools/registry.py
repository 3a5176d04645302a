"""The tools the agent knows, by name."""

from __future__ import annotations

from kb_agent.tools.base import Tool
from kb_agent.tools.search_tools import GrepSearch, HybridSearch, ReadFile, VectorSearch


def default_tools() -> dict[str, Tool]:
    tools: list[Tool] = [HybridSearch(), VectorSearch(), GrepSearch(), ReadFile()]
    return {tool.name: tool for tool in tools}
