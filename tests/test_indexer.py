"""Incremental indexing, skip reasons and ACL resolution."""

import os

import pytest

from conftest import write
from kb_agent.governance.access import NOBODY, AccessFilter

ALL = AccessFilter.unrestricted()


def _paths(engine, query, mode="bm25", kb=None, access=ALL):
    return [h.path for h in engine.search(query, access=access, mode=mode, kbs=kb, k=20).hits]


def test_reindex_only_processes_changes(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# Alpha\nalpha apples\n")
    write(root / "b.md", "# Beta\nbeta bananas\n")
    first = engine.index([root])
    assert len(first.added) == 2 and first.chunks_added == 2
    again = engine.index([root])
    assert again.unchanged == 2 and not again.added and not again.updated and again.chunks_added == 0


def test_edit_delete_rename(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# Alpha\nalpha apples\n")
    write(root / "b.md", "# Beta\nbeta bananas\n")
    engine.index([root])

    write(root / "a.md", "# Alpha\nalpha apricots\n")
    os.utime(root / "a.md", (1, 1))  # a different mtime even on coarse filesystems
    report = engine.index([root])
    assert report.updated == ["docs/a.md"]
    assert _paths(engine, "apricots") == ["docs/a.md"]
    assert _paths(engine, "apples") == []

    (root / "b.md").rename(root / "c.md")
    report = engine.index([root])
    assert report.deleted == ["docs/b.md"] and report.added == ["docs/c.md"]
    assert _paths(engine, "bananas") == ["docs/c.md"]

    (root / "c.md").unlink()
    report = engine.index([root])
    assert report.deleted == ["docs/c.md"]
    assert _paths(engine, "bananas") == []
    assert engine.kb().catalog.count_chunks() == 1


def test_touched_but_unchanged_file_is_not_reprocessed(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\ncontent\n")
    engine.index([root])
    os.utime(root / "a.md", (5, 5))
    report = engine.index([root])
    assert report.unchanged == 1 and not report.updated


def test_skips_with_reasons_and_broken_files_do_not_stop_the_run(engine, tmp_path, settings):
    root = tmp_path / "docs"
    write(root / "good.md", "# Good\nfine content\n")
    write(root / "empty.txt", "")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (root / "big.txt").write_bytes(b"x" * 2048)
    write(root / ".hidden.md", "secret")
    write(root / "node_modules" / "dep.js", "ignored")
    engine.settings.max_file_mb = 1 / 1024  # 1 KiB
    report = engine.index([root])
    reasons = dict(report.skipped)
    assert report.added == ["docs/good.md"]
    assert reasons["docs/empty.txt"] == "empty file"
    assert "binary" in reasons["docs/image.png"]
    assert "PDF" in reasons["docs/broken.pdf"]
    assert "KB_AGENT_MAX_FILE_MB" in reasons["docs/big.txt"]
    assert not any("hidden" in p or "node_modules" in p for p in reasons)


def test_missing_path_is_a_clear_error(engine, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        engine.index([tmp_path / "nope"])


def test_acl_resolution_kbacl_front_matter_and_run_acl(engine, tmp_path):
    root = tmp_path / "corp"
    write(root / "public.md", "# P\nshared handbook\n")
    write(root / "hr" / ".kbacl", "# HR only\nhr\n")
    write(root / "hr" / "salaries.md", "# S\nsalary bands\n")
    write(root / "hr" / "deep" / "reviews.md", "# R\nperformance reviews\n")
    write(root / "hr" / "open.md", "---\nacl: [everyone]\n---\n# O\nopen enrolment\n")
    write(root / "leads" / ".kbacl", "hr\nhr-leads\n")
    write(root / "leads" / "plan.md", "---\nacl: [hr-leads]\n---\n# L\nsuccession plan\n")
    report = engine.index([root])
    acl = {s.chunk.path: s.chunk.acl for s in engine.kb().catalog.iter_chunks()}
    assert acl["corp/public.md"] == []
    assert acl["corp/hr/salaries.md"] == ["hr"]
    assert acl["corp/hr/deep/reviews.md"] == ["hr"]  # inherited from the parent folder
    assert acl["corp/leads/plan.md"] == ["hr-leads"]  # front matter narrows its folder's ACL
    assert acl["corp/hr/open.md"] == [NOBODY]  # ... and can never widen it: no group is in both
    assert [p for p, _ in report.warnings] == ["corp/hr/open.md"]

    other = tmp_path / "legal"
    write(other / "contract.md", "# C\ncontract terms\n")
    engine.index([other], acl=["legal"])
    engine.index([other])  # re-running without --acl keeps the root's ACL
    acl = {s.chunk.path: s.chunk.acl for s in engine.kb().catalog.iter_chunks()}
    assert acl["legal/contract.md"] == ["legal"]


def test_acl_change_reindexes_unchanged_content(engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nroadmap details\n")
    engine.index([root])
    write(root / ".kbacl", "exec\n")
    report = engine.index([root])
    assert report.updated == ["docs/a.md"]
    assert _paths(engine, "roadmap", access=AccessFilter.for_groups(["eng"])) == []
    assert _paths(engine, "roadmap", access=AccessFilter.for_groups(["exec"])) == ["docs/a.md"]


def test_throughput_is_reported(engine, tmp_path):
    root = tmp_path / "docs"
    for i in range(20):
        write(root / f"f{i}.md", f"# F{i}\n" + "text line\n" * 30)
    report = engine.index([root])
    assert report.chunks_added == 20 and report.chunks_per_s > 0
    assert report.as_dict()["chunks_per_s"] > 0


def test_two_folders_of_the_same_name_do_not_share_citation_paths(engine, tmp_path):
    """A second checkout of the same docs folder used to crash the run (UNIQUE constraint on chunk ids)."""
    import shutil

    first, second = tmp_path / "a" / "docs", tmp_path / "b" / "docs"
    write(first / "guide.md", "# Guide\nThe first copy.\n")
    write(second / "guide.md", "# Guide\nThe second copy.\n")
    engine.index([first])
    report = engine.index([second])
    assert [path for path, _ in report.skipped] == ["docs/guide.md"]
    assert "already used by" in report.skipped[0][1] and "--kb" in report.skipped[0][1]
    assert engine.search("copy", mode="bm25").hits[0].source == str(first / "guide.md")
    shutil.rmtree(first)  # the first folder moved away: the second one takes its place
    report = engine.index([second])
    assert report.skipped == [] and engine.search("copy", mode="bm25").hits[0].source == str(second / "guide.md")
