"""Every ACL source fails closed: a mistake by an author or an operator may hide a file, never publish it.

Each case writes a restricted document carrying a canary, indexes it, and checks that a caller outside
the group finds the canary in no retrieval mode and cannot read the file."""

from __future__ import annotations

import json
import os

import pytest

from conftest import write
from kb_agent.governance.access import NOBODY, AccessFilter

CANARY = "zebracorn"
OUTSIDER = AccessFilter.for_groups(["eng"])
MEMBER = AccessFilter.for_groups(["hr"])


def _found(engine, access, modes=("bm25", "grep", "dense")) -> set[str]:
    paths = set()
    for mode in modes:
        paths |= {h.path for h in engine.search(CANARY, access=access, mode=mode, k=50).hits if CANARY in h.text}
    return paths


def _acl(engine) -> dict[str, list[str]]:
    return {s.chunk.path: s.chunk.acl for s in engine.kb().catalog.iter_chunks()}


def _skipped(report) -> dict[str, str]:
    return dict(report.skipped)


BROKEN_FRONT_MATTER = {
    "unquoted_colon": "---\ntitle: Merger: Project Falcon\nacl: [hr]\n---\n",
    "tab": "---\nacl:\n\t- hr\n---\n",
    "bad_alias": "---\ntitle: *nothing\nacl: [hr]\n---\n",
    "blank_line_first": "\n---\nacl: [hr]\n---\n",
    "duplicate_key": "---\nacl: [hr]\nacl: [eng]\n---\n",
    "case_duplicate": "---\nacl: [hr]\nACL: [eng]\n---\n",
    "not_closed": "---\nacl: [hr]\n",
    "too_long": "---\n" + "".join(f"k{i}: v\n" for i in range(250)) + "acl: [hr]\n---\n",
    "nested": "---\nmeta:\n  acl: [hr]\n---\n",
    "not_a_mapping": "---\n- acl: [hr]\n---\n",
    "empty_list": "---\nacl: []\n---\n",
    "empty_string": '---\nacl: ""\n---\n',
    "empty_member": '---\nacl: [""]\n---\n',
    "null": "---\nacl:\n---\n",
    "boolean": "---\nacl: [no]\n---\n",
    "mapping": "---\nacl: {hr: true}\n---\n",
    "spaces_in_name": '---\nacl: ["hr team"]\n---\n',
}


@pytest.mark.parametrize("case", sorted(BROKEN_FRONT_MATTER))
def test_front_matter_that_cannot_be_read_skips_the_file(engine, tmp_path, case):
    root = tmp_path / "corp"
    write(root / "public" / "doc.md", BROKEN_FRONT_MATTER[case] + f"# Doc\nThe {CANARY} plan.\n")
    report = engine.index([root])
    engine.embed()
    assert "corp/public/doc.md" in _skipped(report), report.skipped
    assert _found(engine, OUTSIDER) == set() and _found(engine, AccessFilter.for_groups([])) == set()


@pytest.mark.parametrize("spelling", ["ACL", "Acl", "acls"])
def test_acl_key_spellings_are_honoured(engine, tmp_path, spelling):
    root = tmp_path / "corp"
    write(root / "doc.md", f"---\n{spelling}: [hr]\n---\n# Doc\nThe {CANARY} plan.\n")
    engine.index([root])
    assert _acl(engine)["corp/doc.md"] == ["hr"]
    assert _found(engine, OUTSIDER) == set() and _found(engine, MEMBER, ("bm25",)) == {"corp/doc.md"}


def test_front_matter_in_plain_text_narrows_too(engine, tmp_path):
    write(tmp_path / "corp" / "notes.txt", f"---\nacl: [hr]\n---\nThe {CANARY} plan.\n")
    write(tmp_path / "corp" / "broken.txt", f"---\ntitle: a: b\nacl: [hr]\n---\nThe {CANARY} plan.\n")
    report = engine.index([tmp_path / "corp"])
    assert _acl(engine)["corp/notes.txt"] == ["hr"] and "corp/broken.txt" in _skipped(report)
    assert _found(engine, OUTSIDER, ("bm25", "grep")) == set()


def test_front_matter_without_acl_stays_tolerant(engine, tmp_path):
    write(tmp_path / "corp" / "doc.md", "---\ntitle: A: B\n---\n# Doc\nplain text\n")
    report = engine.index([tmp_path / "corp"])
    assert report.skipped == [] and _acl(engine)["corp/doc.md"] == []


def test_a_file_acl_narrows_its_folder_and_never_widens_it(engine, tmp_path):
    root = tmp_path / "corp"
    write(root / "hr" / ".kbacl", "hr\nfinance\n")
    write(root / "hr" / "narrow.md", f"---\nacl: [hr]\n---\n# N\n{CANARY} narrow\n")
    write(root / "hr" / "wide.md", f"---\nacl: [everyone, hr]\n---\n# W\n{CANARY} wide\n")
    write(root / "hr" / "other.md", f"---\nacl: [eng]\n---\n# O\n{CANARY} other\n")
    write(root / "hr" / "empty.md", f"---\nacl: []\n---\n# E\n{CANARY} empty\n")
    report = engine.index([root])
    acl = _acl(engine)
    assert acl["corp/hr/narrow.md"] == ["hr"] and acl["corp/hr/wide.md"] == ["hr"]
    assert acl["corp/hr/other.md"] == [NOBODY] and "corp/hr/other.md" in dict(report.warnings)
    assert "acl is empty" in _skipped(report)["corp/hr/empty.md"]
    assert _found(engine, OUTSIDER) == set()
    assert _found(engine, AccessFilter.for_groups(["everyone"])) == set()


def test_an_empty_kbacl_means_no_group_not_everyone(engine, tmp_path):
    root = tmp_path / "corp"
    write(root / "hr" / ".kbacl", "# nobody yet\n\n")
    write(root / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
    engine.index([root])
    assert _acl(engine)["corp/hr/pay.md"] == [NOBODY]
    assert _found(engine, OUTSIDER) == set() and _found(engine, MEMBER) == set()
    assert _found(engine, AccessFilter.unrestricted(), ("bm25",)) == {"corp/hr/pay.md"}  # the owner still can


@pytest.mark.parametrize("content", ["hr finance\n", "hr,finance\n", b"\xff\xfehr\n", "__public__\n"])
def test_an_ambiguous_or_unreadable_kbacl_skips_its_files(engine, tmp_path, content):
    root = tmp_path / "corp"
    acl_file = root / "hr" / ".kbacl"
    acl_file.parent.mkdir(parents=True)
    acl_file.write_bytes(content if isinstance(content, bytes) else content.encode())
    write(root / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
    report = engine.index([root])
    assert "corp/hr/pay.md" in _skipped(report)
    assert _found(engine, OUTSIDER) == set()


def test_a_kbacl_that_is_a_folder_or_a_broken_link_fails_closed(engine, tmp_path):
    root = tmp_path / "corp"
    (root / "a" / ".kbacl").mkdir(parents=True)
    write(root / "a" / "doc.md", f"# A\n{CANARY} a\n")
    (root / "b").mkdir()
    os.symlink(tmp_path / "missing", root / "b" / ".kbacl")
    write(root / "b" / "doc.md", f"# B\n{CANARY} b\n")
    report = engine.index([root])
    assert {"corp/a/doc.md", "corp/b/doc.md"} <= set(_skipped(report))


def test_indexing_a_sub_folder_still_applies_the_parents_kbacl(engine, tmp_path):
    root = tmp_path / "corpus"
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "sub" / "pay.md", f"# Pay\n{CANARY} bands\n")
    engine.index([root / "hr" / "sub"])
    assert _acl(engine)["sub/pay.md"] == ["hr"]
    assert _found(engine, OUTSIDER) == set()


@pytest.mark.parametrize("order", ["parent_first", "child_first"])
def test_overlapping_roots_give_the_most_restrictive_acl_whatever_ran_last(engine, tmp_path, order):
    corpus = tmp_path / "corpus"
    write(corpus / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
    runs = [([corpus], None), ([corpus / "hr"], ["hr"])]
    for paths, acl in runs if order == "parent_first" else runs[::-1]:
        engine.index(paths, acl=acl)
    engine.index([corpus])  # the parent again, without --acl: the child's --acl keeps protecting
    write(corpus / "hr" / "pay.md", f"# Pay\n{CANARY} bands, edited\n")
    engine.index([corpus])
    acls = list(_acl(engine).values())
    assert acls and all(acl == ["hr"] for acl in acls)
    assert _found(engine, OUTSIDER) == set()


def test_the_intersection_of_two_roots_acls(engine, tmp_path):
    corpus = tmp_path / "corpus"
    write(corpus / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
    engine.index([corpus], acl=["staff", "hr"])
    engine.index([corpus / "hr"], acl=["hr", "finance"])
    engine.index([corpus])
    assert all(acl == ["hr"] for acl in _acl(engine).values())


def test_a_symlink_takes_the_acl_of_its_targets_folder(engine, tmp_path):
    root = tmp_path / "corp"
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
    (root / "public").mkdir()
    os.symlink(root / "hr" / "pay.md", root / "public" / "pay-link.md")
    engine.index([root])
    assert _acl(engine)["corp/public/pay-link.md"] == ["hr"]
    assert _found(engine, OUTSIDER) == set()


def test_a_symlink_into_another_root_of_the_kb_is_indexed_with_that_roots_acl(engine, tmp_path):
    hr, wiki = tmp_path / "hr", tmp_path / "wiki"
    write(hr / "pay.md", f"# Pay\n{CANARY} bands\n")
    (wiki).mkdir()
    os.symlink(hr / "pay.md", wiki / "pay.md")
    report = engine.index([wiki])  # hr is not a root yet: the link leaves every root
    assert "outside every indexed root" in _skipped(report)["wiki/pay.md"]
    engine.index([hr], acl=["hr"])
    engine.index([wiki])
    assert _acl(engine)["wiki/pay.md"] == ["hr"]
    assert _found(engine, OUTSIDER) == set()


def test_jsonl_records_with_an_acl_field_are_acl_sources(engine, tmp_path):
    records = [
        {"_id": "T-1", "title": "open", "text": "public ticket about lunch"},
        {"_id": "T-2", "title": "restricted", "text": f"{CANARY} payroll ticket", "acl": ["hr"]},
        {"_id": "T-3", "title": "meta", "text": f"{CANARY} meta ticket", "metadata": {"ACL": "hr"}},
        {"_id": "T-4", "title": "broken", "text": f"{CANARY} broken ticket", "acl": []},
    ]
    write(tmp_path / "tix" / "tickets.jsonl", "\n".join(json.dumps(r) for r in records) + "\n")
    report = engine.index([tmp_path / "tix"])
    assert "acl is empty" in _skipped(report)["tix/tickets.jsonl#T-4"]
    by_doc = {s.chunk.doc_id: s.chunk.acl for s in engine.kb().catalog.iter_chunks()}
    assert by_doc == {"tix/tickets.jsonl#T-1": [], "tix/tickets.jsonl#T-2": ["hr"], "tix/tickets.jsonl#T-3": ["hr"]}
    assert _found(engine, OUTSIDER, ("bm25", "dense")) == set()
    assert _found(engine, OUTSIDER, ("grep",)) == set()  # the raw file mixes ACLs: nobody greps it


def test_a_broken_acl_added_later_removes_the_indexed_version(engine, tmp_path):
    doc = write(tmp_path / "corp" / "plan.md", f"# Plan\nThe {CANARY} plan.\n")
    engine.index([tmp_path / "corp"])
    assert _found(engine, OUTSIDER, ("bm25",)) == {"corp/plan.md"}  # public for now
    doc.write_text(f"---\ntitle: Merger: Falcon\nacl: [exec]\n---\n# Plan\nThe {CANARY} plan.\n")
    report = engine.index([tmp_path / "corp"])
    assert "indexed version was removed" in _skipped(report)["corp/plan.md"]
    assert _found(engine, OUTSIDER) == set()


def test_invalid_root_acl_is_refused(engine, tmp_path):
    write(tmp_path / "corp" / "a.md", "# A\nx\n")
    with pytest.raises(ValueError, match="not a valid group name"):
        engine.index([tmp_path / "corp"], acl=["hr finance"])


class TestLiveFiles:
    """read_file, /v1/sources and grep serve the file as indexed, or refuse it: never the live file under the
    ACL it had when it was indexed."""

    @pytest.fixture
    def corp(self, engine, tmp_path):
        root = tmp_path / "corp"
        write(root / "public" / "guide.md", "# Guide\nOpen at nine.\n")
        write(root / "hr" / ".kbacl", "hr\n")
        write(root / "hr" / "pay.md", f"# Pay\n{CANARY} bands\n")
        engine.index([root])
        return root

    def _read(self, engine, path):
        return engine.run_tool("read_file", {"path": path}, user=engine.identify(None, groups=["eng"]))

    def test_a_public_file_replaced_by_a_symlink_to_an_hr_file(self, engine, corp):
        guide = corp / "public" / "guide.md"
        guide.unlink()
        os.symlink(corp / "hr" / "pay.md", guide)
        result = self._read(engine, "corp/public/guide.md")
        assert result.status == "denied" and CANARY not in json.dumps(result.public_dict())
        assert _found(engine, OUTSIDER, ("grep",)) == set()

    def test_an_acl_added_to_a_public_file_applies_before_the_next_index_run(self, engine, corp):
        (corp / "public" / "guide.md").write_text(f"---\nacl: [hr]\n---\n# Guide\nOpen at nine. {CANARY}\n")
        result = self._read(engine, "corp/public/guide.md")
        assert result.status == "denied" and "changed since it was indexed" in result.error
        assert _found(engine, OUTSIDER, ("grep",)) == set()
        engine.index([corp])
        assert self._read(engine, "corp/public/guide.md").status == "error"  # now hr-only: not visible

    def test_an_unchanged_file_is_served(self, engine, corp):
        result = self._read(engine, "corp/public/guide.md")
        assert result.status == "ok" and "Open at nine." in result.evidence[0].text
