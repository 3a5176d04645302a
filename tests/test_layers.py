"""The import layers of `src/kb_agent`: each package imports only packages on lower layers.

A new upward import (a store importing the agent, the core importing an interface) fails here with the
file, the line and the two layers, so the picture in docs/architecture.md stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kb_agent"

# lower number = lower layer; a module may import only strictly lower layers (and its own package)
LAYERS = {
    "text": 0,  # tokenizers: pure functions
    "config": 0,  # settings
    "retry": 0,  # the one retry policy for outbound HTTP
    "llm": 1,  # the model layer: chat models and embedders
    "governance": 1,  # the gate: policy, access filters, audit, masking, budgets
    "store": 2,  # catalog, lexical index, vectors, graph: every query takes an access filter
    "ingest": 3,  # files -> records and chunks -> the store's write API
    "retrieval": 3,  # store queries -> ranked, fused passages
    "connectors": 3,  # Jira, Confluence, web
    "tools": 4,  # Tool Cards over retrieval and connectors
    "agent": 5,  # the LangGraph nodes
    "engine": 6,  # the public entry point: opens every request at the gate
    "interfaces": 7,  # cli, tui, server, mcp: thin adapters over the engine
    "evaluation": 8,  # the harness: drives the product as a user and an attacker would, transports included
}
# (importing file, imported package): the only imports that may go up, each with its reason
ALLOWED_UPWARD = {
    ("interfaces/cli/evaluate.py", "evaluation"): "`kb-agent eval` and `kb-agent redteam` start the harness",
}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == "kb_agent" or name.startswith("kb_agent."):
                yield node.lineno, _part(name)


def _own_part(path: Path, src: Path = SRC) -> str:
    head = path.relative_to(src).parts[0]
    return head.removesuffix(".py")


def upward_imports(src: Path = SRC) -> list[str]:
    problems = []
    for path in sorted(src.rglob("*.py")):
        own = _own_part(path, src)
        if own == "__init__":
            continue
        rel = str(path.relative_to(src))
        for line, target in _imports(path):
            if target == own or (rel, target) in ALLOWED_UPWARD:
                continue
            if target not in LAYERS or own not in LAYERS:
                problems.append(f"{rel}:{line}: {own} -> {target}: a package with no layer (add it to LAYERS)")
            elif LAYERS[target] >= LAYERS[own]:
                problems.append(f"{rel}:{line}: {own} (layer {LAYERS[own]}) imports {target} (layer {LAYERS[target]})")
    return problems


def test_every_import_goes_down_a_layer():
    assert upward_imports() == []


def test_the_core_never_imports_an_interface():
    core = [p for p, n in LAYERS.items() if n < LAYERS["interfaces"]]
    hits = [
        f"{path.relative_to(SRC)}:{line}"
        for path in SRC.rglob("*.py")
        if _own_part(path) in core
        for line, target in _imports(path)
        if target == "interfaces"
    ]
    assert hits == []


def test_the_rule_catches_an_upward_import(tmp_path):
    """Control: a store module that imports the agent is reported."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "leak.py").write_text("from kb_agent.agent.graph import build\n")
    assert upward_imports(tmp_path) == ["store/leak.py:1: store (layer 2) imports agent (layer 5)"]


@pytest.mark.parametrize("exception", sorted(ALLOWED_UPWARD))
def test_each_allowed_exception_is_still_needed(exception):
    """An exception nobody uses any more is removed, not kept as a silent licence."""
    rel, target = exception
    assert any(t == target for _, t in _imports(SRC / rel)), f"{rel} no longer imports {target}: drop the exception"
