"""Optional extras (server, tui, mcp, local-llm): the core works without them, and a command that needs
one says which extra to install instead of failing with a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

OPTIONAL = ["fastapi", "uvicorn", "prometheus_client", "jwt", "textual", "mcp", "xllamacpp", "starlette"]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    BLOCKED = set(sys.argv[1].split(","))

    class Blocker:  # behaves as if these packages were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, Blocker())
    from typer.testing import CliRunner
    from kb_agent.interfaces.cli import app

    folder, data = sys.argv[2], sys.argv[3]
    env = {"KB_AGENT_DATA_FOLDER": data, "KB_AGENT_LLM_PROVIDER": "none"}
    runner = CliRunner()
    out = {}
    for name, args in [("index", ["index", folder, "--no-embed"]), ("search", ["search", "tokens", "--mode", "bm25"]),
                       ("ask", ["ask", "How long do tokens last?"]), ("serve", ["serve"]), ("mcp", ["mcp"]),
                       ("tui", [])]:
        result = runner.invoke(app, args, env=env)
        out[name] = {"code": result.exit_code, "output": result.output}
    out["imported"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps(out))
    """
)


@pytest.mark.slow  # a real subprocess that imports the whole CLI (CI runs it)
def test_the_core_runs_without_the_optional_extras(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "auth.md").write_text("# Auth\nAccess tokens last 30 minutes.\n")
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, ",".join(OPTIONAL), str(docs), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["imported"] == []
    assert out["index"]["code"] == 0 and out["search"]["code"] == 0 and "auth.md" in out["search"]["output"]
    assert out["ask"]["code"] == 0 and "docs/auth.md:L2" in out["ask"]["output"]
    assert out["serve"]["code"] == 2 and "pip install 'kb-agent[server]'" in out["serve"]["output"]
    assert out["mcp"]["code"] == 2 and "kb-agent[mcp]" in out["mcp"]["output"]
    assert out["tui"]["code"] == 2 and "kb-agent[tui]" in out["tui"]["output"]
