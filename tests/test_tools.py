"""Tools run with the caller's access scope; read_file reads only indexed files the caller may see."""

import pytest

from conftest import write
from kb_agent.retrieval.searcher import Searcher
from kb_agent.store.access import AccessFilter
from kb_agent.tools.base import ToolArgsError, ToolContext
from kb_agent.tools.registry import default_tools


@pytest.fixture
def ctx_for(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "guide.md", "# Guide\n" + "".join(f"line {i}\n" for i in range(2, 300)))
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", "# Pay\nsalary bands\n")
    import docx

    document = docx.Document()
    document.add_heading("Policy", level=1)
    document.add_paragraph("Remote work is allowed on Fridays.")
    document.save(root / "policy.docx")
    engine.index([root])

    def make(groups=None):
        access = AccessFilter.unrestricted() if groups is None else AccessFilter.for_groups(groups)
        kbs = [engine.kb()]
        return ToolContext(engine.settings, access, kbs, Searcher(kbs, engine.settings, embedder=engine.embedder))

    return make


def _read(ctx, **args):
    tool = default_tools()["read_file"]
    return tool.run(tool.validate(args), ctx)


def test_read_file_returns_exact_lines(ctx_for):
    (item,) = _read(ctx_for(), path="docs/guide.md", start_line=10, end_line=12)
    assert item.text == "line 10\nline 11\nline 12" and item.citation == "docs/guide.md:L10-12"


def test_read_file_caps_the_number_of_lines(ctx_for):
    (item,) = _read(ctx_for(), path="docs/guide.md")
    assert item.start_line == 1 and item.end_line == 200


def test_read_file_of_extracted_formats_uses_the_extracted_text(ctx_for):
    (item,) = _read(ctx_for(), path="docs/policy.docx")
    assert "Remote work is allowed on Fridays." in item.text and "PK" not in item.text


@pytest.mark.parametrize("path", ["docs/hr/pay.md", "/etc/passwd", "../../etc/passwd", "docs/../docs/hr/pay.md",
                                  "docs/missing.md"])
def test_read_file_refuses_invisible_or_unknown_paths(ctx_for, path):
    with pytest.raises(ToolArgsError, match="no indexed file"):
        _read(ctx_for(["eng"]), path=path)


def test_read_file_allows_members(ctx_for):
    (item,) = _read(ctx_for(["hr"]), path="docs/hr/pay.md")
    assert "salary bands" in item.text


def test_tool_schemas_reject_bad_args():
    tools = default_tools()
    with pytest.raises(ToolArgsError, match="query"):
        tools["hybrid_search"].validate({"top_k": 3})
    with pytest.raises(ToolArgsError, match="top_k"):
        tools["grep_search"].validate({"query": "x", "top_k": 10_000})
    with pytest.raises(ToolArgsError):
        tools["read_file"].validate({"path": "a.md", "start_line": 0})


def test_search_tools_apply_the_callers_acl(ctx_for):
    tool = default_tools()["hybrid_search"]
    outsider = tool.run(tool.validate({"query": "salary bands"}), ctx_for(["eng"]))
    assert all("hr/" not in e.path for e in outsider)
    member = tool.run(tool.validate({"query": "salary bands"}), ctx_for(["hr"]))
    assert member[0].path == "docs/hr/pay.md"
