"""No single input aborts an index run: each hostile file is skipped with a true reason (or indexed, when
it is text after all) while everything else is indexed - through the engine, the CLI and /v1/index."""

from __future__ import annotations

import io
import json
import os
import zipfile

import pytest

from conftest import write
from kb_agent.config import get_settings


def _names(report) -> dict[str, str]:
    return dict(report.skipped)


@pytest.fixture
def hostile(tmp_path):
    root = tmp_path / "docs"
    write(root / "ok.md", "# OK\nThe ordinary file still gets indexed.\n")
    with open(os.fsencode(root) + b"/bad_\xff.md", "wb") as handle:
        handle.write(b"# Bad name\ntext\n")
    write(
        root / "dup.jsonl",
        json.dumps({"_id": "a", "text": "first"}) + "\n" + json.dumps({"_id": "a", "text": "x"}) + "\n",
    )
    write(root / "lines.jsonl", json.dumps({"_id": "k", "text": "kept record"}) + "\n{broken\n[1, 2]\n")
    os.mkfifo(root / "pipe.md")
    (root / "wide.md").write_bytes("# Wide\nutf sixteen words here\n".encode("utf-16"))
    write(root / "long.txt", "lorem " * 100_000)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<w>" + b"a" * 50_000_000 + b"</w>")
    (root / "bomb.docx").write_bytes(bomb.getvalue())
    return root


def test_hostile_files_are_skipped_with_true_reasons(engine, hostile):
    report = engine.index([hostile])
    skipped = _names(report)
    assert "docs/ok.md" in report.added and "docs/long.txt" in report.added
    assert skipped["docs/bad_\\xff.md"] == "file name is not valid UTF-8 (rename the file to index it)"
    assert skipped["docs/dup.jsonl#L2"].startswith("line 2: duplicate _id 'a' (first on line 1)")
    assert skipped["docs/lines.jsonl#L2"].startswith("line 2: not valid JSON")
    assert skipped["docs/lines.jsonl#L3"] == "line 3: not a JSON object"
    assert skipped["docs/pipe.md"] == "not a regular file (a FIFO)"  # not "empty file"
    assert "compression" in skipped["docs/bomb.docx"]
    assert "docs/wide.md" not in skipped  # UTF-16 with a BOM is text, not "binary file"
    hits = engine.search("sixteen", mode="bm25").hits
    assert hits and hits[0].path == "docs/wide.md" and "utf sixteen words" in hits[0].text
    assert engine.search("kept record", mode="bm25").hits[0].path == "docs/lines.jsonl"


def test_a_very_long_line_is_split(engine, hostile):
    engine.index([hostile])
    chunks = [s.chunk for s in engine.kb().catalog.iter_chunks() if s.chunk.path == "docs/long.txt"]
    assert len(chunks) > 100 and max(len(c.text) for c in chunks) <= engine.settings.chunk_max_chars
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)  # every piece cites its line


def test_an_unreadable_folder_is_reported(engine, tmp_path, monkeypatch):
    root = tmp_path / "docs"
    write(root / "ok.md", "# OK\ntext\n")
    write(root / "locked" / "x.md", "# X\ntext\n")
    real_walk = os.walk

    def walk(top, onerror=None, **kwargs):  # root can read anything: simulate the permission error
        for dirpath, dirnames, filenames in real_walk(top, onerror=onerror, **kwargs):
            if "locked" in dirnames:
                dirnames.remove("locked")
                onerror(PermissionError(13, "Permission denied", os.path.join(dirpath, "locked")))
            yield dirpath, dirnames, filenames

    monkeypatch.setattr("kb_agent.ingest.scanner.os.walk", walk)
    report = engine.index([root])
    assert _names(report)["docs/locked"] == "cannot read folder: Permission denied"
    assert report.added == ["docs/ok.md"]


def test_the_cli_reports_them_and_exits_0(hostile, settings, monkeypatch):
    from typer.testing import CliRunner

    from kb_agent.interfaces.cli import app

    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(settings.data_folder))
    get_settings.cache_clear()
    result = CliRunner().invoke(app, ["index", str(hostile), "--no-embed", "--json"])
    get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    skipped = {s["path"]: s["reason"] for s in json.loads(result.output)["skipped"]}
    assert skipped["docs/pipe.md"] == "not a regular file (a FIFO)"


def test_a_root_that_is_gone_can_be_removed_or_pruned(engine, tmp_path):
    import shutil

    from typer.testing import CliRunner

    from kb_agent.interfaces.cli import app

    for name in ("old", "kept"):
        write(tmp_path / name / f"{name}.md", f"# {name}\nThe {name} folder mentions zebras.\n")
    engine.index([tmp_path / "old"])
    engine.index([tmp_path / "kept"])
    shutil.rmtree(tmp_path / "old")
    assert {h.path for h in engine.search("zebras", mode="bm25").hits} == {"old/old.md", "kept/kept.md"}  # stale
    with pytest.raises(FileNotFoundError, match="not an indexed root"):
        engine.remove([tmp_path / "nowhere"])
    report = engine.remove(None)  # what `index --prune` does: every root missing on disk
    assert report.deleted == ["old/old.md"] and report.chunks_removed == 1
    assert {h.path for h in engine.search("zebras", mode="bm25").hits} == {"kept/kept.md"}
    assert str(tmp_path / "old") not in engine.kb().roots()
    env = {"KB_AGENT_DATA_FOLDER": str(engine.settings.data_folder)}
    get_settings.cache_clear()
    result = CliRunner().invoke(app, ["remove", str(tmp_path / "kept"), "--json"], env=env)
    get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["removed_files"] == ["kept/kept.md"]
    engine.kb().refresh()
    assert engine.search("zebras", mode="bm25").hits == []


def test_two_roots_of_the_same_name_in_one_run(engine, tmp_path):
    write(tmp_path / "a" / "docs" / "x.md", "# X\none\n")
    write(tmp_path / "b" / "docs" / "x.md", "# X\ntwo\n")
    write(tmp_path / "b" / "docs" / "y.md", "# Y\nthree\n")
    report = engine.index([tmp_path / "a" / "docs", tmp_path / "b" / "docs"])
    assert sorted(report.added) == ["docs/x.md", "docs/y.md"]
    assert "already used by" in _names(report)["docs/x.md"]


def test_what_remove_reports_passes_the_outbound_filter(engine, tmp_path):
    root = tmp_path / "boss@corp.example"
    write(root / "a.md", "# A\ntext\n")
    engine.index([root])
    report = engine.remove([root])
    assert report.deleted and all("boss@corp.example" not in path for path in report.deleted)


def test_a_paragraph_line_a_little_over_a_chunk_stays_whole(engine, tmp_path):
    abstract = " ".join(f"word{i}" for i in range(700))  # ~5,600 characters on one line, like a long abstract
    write(tmp_path / "docs" / "abstract.txt", abstract + "\n")
    engine.index([tmp_path / "docs"])
    chunks = [s.chunk for s in engine.kb().catalog.iter_chunks()]
    assert len(chunks) == 1 and chunks[0].text == abstract
