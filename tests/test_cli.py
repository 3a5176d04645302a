"""The CLI's JSON shapes and error handling, through the real entry point."""

import json

import pytest
from typer.testing import CliRunner

from conftest import write
from kb_agent.config import get_settings
from kb_agent.interfaces.cli import app

runner = CliRunner()


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(tmp_path / "data"))
    get_settings.cache_clear()
    root = tmp_path / "docs"
    write(root / "retry.md", "# Retries\nSet KB_AGENT_MAX_ITERATIONS to bound the retry loop.\n")
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nThe retry bonus is paid monthly.\n")
    yield root
    get_settings.cache_clear()


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_index_json_summary(cli_env):
    summary = _json(runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed", "--json"]))
    assert summary["kb"] == "docs" and summary["added"] == 2 and summary["skipped"] == []
    assert {"updated", "deleted", "unchanged", "chunks_added", "chunks_per_s"} <= set(summary)
    again = _json(runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed", "--json"]))
    assert again["unchanged"] == 2 and again["added"] == 0


@pytest.mark.ripgrep
def test_search_json_shape_and_acl(cli_env):
    runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed"])
    payload = _json(runner.invoke(app, ["search", "retry", "--kb", "docs", "--mode", "bm25", "--json"]))
    keys = {"source", "path", "start_line", "end_line", "text", "score", "kb", "doc_id", "chunk_id"}
    assert payload["results"] and all(set(r) == keys for r in payload["results"])
    assert {r["path"] for r in payload["results"]} == {"docs/retry.md", "docs/hr/pay.md"}
    outsider = _json(
        runner.invoke(app, ["search", "retry", "--kb", "docs", "--mode", "bm25", "--json", "--as-group", "eng"])
    )
    assert [r["path"] for r in outsider["results"]] == ["docs/retry.md"]
    grep = _json(
        runner.invoke(app, ["search", "retry", "--kb", "docs", "--mode", "grep", "--json", "--as-group", "eng"])
    )
    assert [r["path"] for r in grep["results"]] == ["docs/retry.md"]


def test_status_json(cli_env):
    runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed", "--acl", "staff"])
    status = _json(runner.invoke(app, ["status", "--json"]))
    (kb,) = status["knowledge_bases"]
    assert kb["kb"] == "docs" and kb["chunks"] == 2 and kb["embedded"] == 0 and kb["dense_coverage"] == 0
    assert kb["roots"][0]["acl"] == ["staff"]


def test_clear_errors(cli_env, tmp_path):
    # one map on every path: bad input (a missing path, an unknown KB, a bad name) exits 2, denials 3
    missing = runner.invoke(app, ["index", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    no_kb = runner.invoke(app, ["search", "x", "--kb", "ghost"])
    assert no_kb.exit_code == 2 and "does not exist" in no_kb.output
    bad_mode = runner.invoke(app, ["search", "x", "--mode", "fuzzy"])
    assert bad_mode.exit_code == 2 and "unknown --mode" in bad_mode.output
    bad_name = runner.invoke(app, ["index", str(cli_env), "--kb", "../evil", "--no-embed"])
    assert bad_name.exit_code == 2 and "invalid knowledge-base name" in bad_name.output


def test_bad_configuration_is_reported(cli_env, monkeypatch):
    monkeypatch.setenv("KB_AGENT_CHUNK_MAX_CHARS", "500")
    monkeypatch.setenv("KB_AGENT_CHUNK_OVERLAP_CHARS", "900")
    get_settings.cache_clear()
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 2 and "configuration error" in result.output


def test_ask_json_has_exactly_the_documented_keys(cli_env, monkeypatch):
    monkeypatch.setenv("KB_AGENT_LLM_PROVIDER", "none")
    get_settings.cache_clear()
    runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed"])
    payload = _json(runner.invoke(app, ["ask", "How do I bound the retry loop?", "--kb", "docs", "--json"]))
    assert set(payload) == {
        "answer",
        "citations",
        "claims",
        "refused",
        "route",
        "llm_calls",
        "iterations",
        "tokens",
        "fast_paths",
        "timings",
        "steps",
    }
    assert payload["claims"] and all(c["supported"] and c["citation"] for c in payload["claims"])
    assert payload["citations"][0]["path"] == "docs/retry.md" and payload["llm_calls"] == 0
    denied = _json(
        runner.invoke(app, ["ask", "When is the retry bonus paid?", "--kb", "docs", "--json", "--as-group", "eng"])
    )
    assert all("hr/" not in c["path"] for c in denied["citations"])


def test_models_status_json_names_the_configured_bundled_model(cli_env, monkeypatch):
    payload = _json(runner.invoke(app, ["models", "status", "--json"]))
    assert payload["local_model"].endswith("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    monkeypatch.setenv("KB_AGENT_LOCAL_MODEL", "qwen2.5-coder-0.5b-instruct-q4_k_m")
    get_settings.cache_clear()
    payload = _json(runner.invoke(app, ["models", "status", "--json"]))
    assert payload["local_model"].endswith("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    assert not payload["local_model_installed"]


def test_models_status_says_which_runtime_runs_the_local_model(cli_env, monkeypatch):
    monkeypatch.setattr("kb_agent.llm.native_backend.available", lambda: False)
    assert _json(runner.invoke(app, ["models", "status", "--json"]))["local_runtime"] == "xllamacpp"
    monkeypatch.setattr("kb_agent.llm.native_backend.available", lambda: True)
    assert _json(runner.invoke(app, ["models", "status", "--json"]))["local_runtime"] == "native"
    monkeypatch.setenv("KB_AGENT_LOCAL_RUNTIME", "xllamacpp")  # the setting wins over what is installed
    get_settings.cache_clear()
    assert _json(runner.invoke(app, ["models", "status", "--json"]))["local_runtime"] == "xllamacpp"


def test_models_install_rejects_an_unknown_model_with_the_choices(cli_env):
    result = runner.invoke(app, ["models", "install", "--model", "llama-70b"])
    assert result.exit_code != 0 and "qwen2.5-coder-0.5b-instruct-q4_k_m" in result.output


def test_chat_session_answers_toggles_mode_and_quits(cli_env, monkeypatch):
    monkeypatch.setenv("KB_AGENT_LLM_PROVIDER", "none")
    get_settings.cache_clear()
    runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed"])
    result = runner.invoke(
        app, ["chat", "--kb", "docs"], input="How do I bound the retry loop?\n/mode\nhello\n/clear\n/quit\n"
    )
    assert result.exit_code == 0, result.output
    assert "docs/retry.md:L" in result.output  # KB mode answered with a reference
    assert "mode: chat" in result.output and "needs a generative model" in result.output


def test_tools_lists_cards_as_json(cli_env):
    cards = _json(runner.invoke(app, ["tools", "--json"]))
    names = {c["name"] for c in cards}
    assert {"hybrid_search", "vector_search", "grep_search", "read_file", "local_file_qa"} <= names
    for card in cards:
        assert set(card) >= {
            "name",
            "description",
            "input_schema",
            "output_schema",
            "auth_scope",
            "freshness",
            "timeout_ms",
            "rate_limit",
            "citation_policy",
        }


def test_tools_run_applies_the_acl_and_reports_status(cli_env):
    runner.invoke(app, ["index", str(cli_env), "--kb", "docs", "--no-embed"])
    ok = _json(
        runner.invoke(
            app, ["tools", "run", "read_file", "--args", '{"path": "docs/hr/pay.md"}', "--kb", "docs", "--json"]
        )
    )
    assert ok["status"] == "ok" and ok["evidence"][0]["start_line"] == 1 and "retry bonus" in ok["evidence"][0]["text"]
    hidden = runner.invoke(
        app,
        [
            "tools",
            "run",
            "read_file",
            "--args",
            '{"path": "docs/hr/pay.md"}',
            "--kb",
            "docs",
            "--as-group",
            "eng",
            "--json",
        ],
    )
    assert hidden.exit_code == 1 and json.loads(hidden.stdout)["status"] == "error"
    assert "retry bonus" not in hidden.stdout
    search = _json(
        runner.invoke(
            app,
            [
                "tools",
                "run",
                "hybrid_search",
                "--args",
                '{"query": "retry"}',
                "--kb",
                "docs",
                "--as-group",
                "eng",
                "--json",
            ],
        )
    )
    assert [e["path"] for e in search["evidence"]] == ["docs/retry.md"]
    forged = runner.invoke(app, ["tools", "run", "shell", "--args", "{}", "--kb", "docs", "--json"])
    assert forged.exit_code == 3 and json.loads(forged.stdout)["status"] == "denied"
    bad = runner.invoke(app, ["tools", "run", "read_file", "--args", "[1]", "--kb", "docs"])
    assert bad.exit_code == 2
