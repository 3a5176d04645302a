"""The knowledge base's write API: the indexer changes a KB only through it, only inside one atomic run,
and the read path never writes (the graph is the ingest job's, not the reader's)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import write
from kb_agent.store.catalog import FileRecord

INGEST = Path(__file__).resolve().parents[1] / "src" / "kb_agent" / "ingest"
STORE_INTERNALS = {"catalog", "lexical", "vectors", "cache"}


def _record(source: str) -> FileRecord:
    return FileRecord(
        source=source, root="/r", path="r/a.md", size=1, mtime=0.0, file_hash="h", acl=[], n_chunks=0, inherited_acl=[]
    )


@pytest.mark.parametrize(
    "write_call",
    [
        lambda kb: kb.replace_file(_record("/r/a.md"), []),
        lambda kb: kb.delete_file("/r/a.md"),
        lambda kb: kb.touch_file("/r/a.md", 1, 0.0),
        lambda kb: kb.set_root("/r", []),
    ],
)
def test_writes_outside_an_index_run_are_refused(engine, tmp_path, write_call):
    write(tmp_path / "docs" / "a.md", "# A\ntext\n")
    engine.index([tmp_path / "docs"])
    with pytest.raises(RuntimeError, match=r"inside `with kb\.writing"):
        write_call(engine.kb())


def test_the_indexer_reaches_no_store_internals_for_writing():
    """ingest/ may read the catalog (the graph job does), but every write goes through the KB's API."""
    offenders = []
    for path in INGEST.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)):
                continue
            if node.value.attr == "lexical" or (
                node.value.attr in STORE_INTERNALS
                and node.attr.startswith(("replace", "delete", "touch", "set_", "add"))
            ):
                offenders.append(f"{path.name}:{node.lineno}: .{node.value.attr}.{node.attr}")
    assert offenders == []


def test_the_read_path_never_writes_the_graph(engine, settings, embedder, tmp_path):
    from kb_agent.engine import Engine

    write(tmp_path / "docs" / "a.md", "# A\nSee [b](b.md).\n")
    write(tmp_path / "docs" / "b.md", "# B\ntext\n")
    engine.index([tmp_path / "docs"])
    graph_file = engine.kb().folder / "graph.json"
    assert "file:docs/b.md" in engine.kb().graph().graph  # the index run built it
    graph_file.unlink()
    reader = Engine(settings, embedder=embedder)
    reader.run_tool("graph_related", {"entity": "docs/a.md"})  # "nothing linked": the graph is gone
    reader.search("text")
    assert not graph_file.exists()  # a reader never rebuilds (or writes) the graph
    reader.close()
    engine.index([tmp_path / "docs"])  # the next index run does
    assert "file:docs/b.md" in engine.kb().graph().graph


def test_a_reader_sees_what_a_later_index_run_wrote(engine, settings, embedder, tmp_path):
    from kb_agent.engine import Engine

    write(tmp_path / "docs" / "a.md", "# A\ntext\n")
    engine.index([tmp_path / "docs"])
    reader = Engine(settings, embedder=embedder)
    assert "file:docs/c.md" not in reader.kb().graph().graph
    write(tmp_path / "docs" / "c.md", "# C\nmore\n")
    engine.index([tmp_path / "docs"])
    assert "file:docs/c.md" in reader.kb().graph().graph
    reader.close()
