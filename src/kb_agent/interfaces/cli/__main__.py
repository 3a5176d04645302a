"""`python -m kb_agent.interfaces.cli` (the embed worker and the MCP stdio server start this way)."""

from kb_agent.interfaces.cli import main

main()
