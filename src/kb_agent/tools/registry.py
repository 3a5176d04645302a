"""The tools the agent knows, by name."""

from __future__ import annotations

from kb_agent.tools.base import Tool
from kb_agent.tools.connector_tools import ConfluenceFetch, ConfluenceSearch, JiraFetch, JiraSearch, WebFetch
from kb_agent.tools.file_tools import LocalFileQA, ReadFile
from kb_agent.tools.graph_tools import GraphRelated
from kb_agent.tools.index_tool import IndexCommand
from kb_agent.tools.search_tools import GrepSearch, HybridSearch, VectorSearch

# connector tools are offered only when their connector is configured
REQUIRES = {
    "jira_fetch": "jira",
    "jira_search": "jira",
    "confluence_fetch": "confluence",
    "confluence_search": "confluence",
}


def default_tools() -> dict[str, Tool]:
    tools: list[Tool] = [
        HybridSearch(),
        VectorSearch(),
        GrepSearch(),
        LocalFileQA(),
        ReadFile(),
        GraphRelated(),
        JiraFetch(),
        JiraSearch(),
        ConfluenceFetch(),
        ConfluenceSearch(),
        WebFetch(),
        IndexCommand(),
    ]
    return {tool.name: tool for tool in tools}
