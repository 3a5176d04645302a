"""The MCP server, driven by the official SDK's own client: in memory, and over stdio in a subprocess."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.mcp_server import create_mcp


@pytest.fixture
def kb(settings, tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe office opens at nine.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nSalary reviews happen in March.\n")
    engine = Engine(settings, embedder=HashEmbedder())
    engine.index([root])
    yield engine
    engine.close()


def _payload(result) -> object:
    if getattr(result, "structured_content", None) is not None:
        content = result.structured_content
        return content.get("result", content) if isinstance(content, dict) else content
    return json.loads(result.content[0].text)


def test_tools_scoped_to_the_identity_in_memory(kb):
    async def scenario():
        server = create_mcp(kb, UserContext(user_id="eng", groups=["eng"]))
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"search_knowledge", "read_knowledge", "ask"}
            found = _payload(await client.call_tool("search_knowledge", {"query": "salary reviews office"}))
            assert found and all(hit["path"] != "corp/hr/pay.md" for hit in found)
            read = _payload(await client.call_tool("read_knowledge", {"path": "corp/handbook.md"}))
            assert read["citation"] == "corp/handbook.md:L1-2"
            hidden = await client.call_tool("read_knowledge", {"path": "corp/hr/pay.md"})
            assert hidden.is_error
            answer = _payload(await client.call_tool("ask", {"question": "When does the office open?"}))
            assert not answer["refused"] and answer["citations"][0]["path"] == "corp/handbook.md"

    anyio.run(scenario)


@pytest.mark.slow  # a real subprocess: seconds, not milliseconds (CI runs it)
def test_stdio_transport_with_the_sdk_client(kb, settings):
    env = {**os.environ, "KB_AGENT_DATA_FOLDER": str(settings.data_folder), "KB_AGENT_LLM_PROVIDER": "none"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kb_agent.interfaces.cli", "mcp"], env=env)

    async def scenario():
        async with Client(params) as client:
            found = _payload(await client.call_tool("search_knowledge", {"query": "salary reviews"}))
            assert found[0]["path"] == "corp/hr/pay.md"  # local owner without a policy

    anyio.run(scenario)


@pytest.mark.slow  # a real subprocess: seconds, not milliseconds (CI runs it)
def test_streamable_http_transport_with_the_sdk_client(kb, settings):
    import socket
    import subprocess
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "KB_AGENT_DATA_FOLDER": str(settings.data_folder), "KB_AGENT_LLM_PROVIDER": "none"}
    process = subprocess.Popen(
        [sys.executable, "-m", "kb_agent.interfaces.cli", "mcp", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def scenario():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                read = _payload(await client.call_tool("read_knowledge", {"path": "corp/handbook.md"}))
                assert "office opens at nine" in read["text"]

        anyio.run(scenario)
    finally:
        process.terminate()
        process.wait(timeout=10)
