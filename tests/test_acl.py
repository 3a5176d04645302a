"""A caller never sees a chunk whose ACL it does not share - in every retrieval mode, at any k,
including queries that match only restricted documents (where post-filtering would pad or leak)."""

import pytest

from conftest import index_corp, write
from kb_agent.governance.access import AccessFilter

MODES = ["bm25", "dense", "grep", "hybrid"]


@pytest.fixture
def corp(engine, tmp_path):
    return index_corp(engine, tmp_path / "corp")


RESTRICTED = {"corp/hr/salaries.md", "corp/exec/merger.md"}


def _paths(engine, query, mode, groups, k=50):
    access = AccessFilter.for_groups(groups)
    return {h.path for h in engine.search(query, access=access, mode=mode, k=k).hits}


def _restricted(engine, query, mode, groups):
    return _paths(engine, query, mode, groups) & RESTRICTED


@pytest.mark.parametrize("mode", MODES)
def test_restricted_documents_are_invisible_to_outsiders(corp, mode):
    # "zebracorn" appears only in restricted documents: an outsider must get none of them
    assert _restricted(corp, "zebracorn", mode, ["eng"]) == set()
    assert _restricted(corp, "zebracorn", mode, []) == set()
    if mode in ("bm25", "grep"):  # lexical modes have nothing else to return: no zero-score padding
        assert _paths(corp, "zebracorn", mode, ["eng"]) == set()


@pytest.mark.parametrize("mode", MODES)
def test_members_see_their_groups_only(corp, mode):
    assert _restricted(corp, "zebracorn", mode, ["hr"]) == {"corp/hr/salaries.md"}
    assert _restricted(corp, "zebracorn", mode, ["board"]) == {"corp/exec/merger.md"}
    assert _restricted(corp, "zebracorn", mode, ["hr", "exec", "x"]) == RESTRICTED


@pytest.mark.parametrize("mode", MODES)
def test_public_documents_are_visible_to_everyone(corp, mode):
    assert "corp/handbook.md" in _paths(corp, "vacation policy days", mode, [])


@pytest.mark.parametrize("mode", MODES)
def test_group_names_match_exactly(corp, mode):
    assert _restricted(corp, "zebracorn", mode, ["HR", "h", "hr*", "Exec", "__public__"]) == set()


@pytest.mark.ripgrep
def test_narrowed_acl_after_reindex_applies_to_every_mode(corp, tmp_path):
    write(tmp_path / "corp" / ".kbacl", "staff\nmanagers\n")  # the whole tree: staff and managers only
    handbook = "---\nacl: [managers]\n---\n# Handbook\nThe vacation policy grants 25 days.\n"
    write(tmp_path / "corp" / "handbook.md", handbook)
    corp.index([tmp_path / "corp"])
    corp.embed()
    for mode in MODES:
        assert "corp/handbook.md" not in _paths(corp, "vacation policy", mode, ["staff"]), mode
        assert "corp/handbook.md" in _paths(corp, "vacation policy", mode, ["managers"]), mode


def test_filter_is_inside_the_query_not_a_trimmed_top_k(engine, tmp_path):
    root = tmp_path / "kb"
    for i in range(60):  # many public near-duplicates that outrank the one allowed restricted doc
        write(root / "noise" / f"n{i}.md", f"# N{i}\nquarterly report quarterly report quarterly report {i}\n")
    write(root / "fin" / ".kbacl", "finance\n")
    write(root / "fin" / "q3.md", "# Q3\nquarterly report with the real numbers\n")
    write(root / "other" / ".kbacl", "other\n")
    for i in range(60):
        write(root / "other" / f"o{i}.md", f"# O{i}\nquarterly report quarterly report for other {i}\n")
    engine.index([root])
    engine.embed()
    for mode in ("bm25", "dense", "hybrid"):
        hits = engine.search("quarterly report", access=AccessFilter.for_groups(["finance"]), mode=mode, k=100).hits
        paths = [h.path for h in hits]
        assert "kb/fin/q3.md" in paths, mode
        assert not any(p.startswith("kb/other/") for p in paths), mode
