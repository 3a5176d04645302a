"""One contract, two backends: the embedded store and PostgreSQL + pgvector answer the same way.

ACL in every mode, incremental edit / delete / rename, a crash in the middle of a write, line-exact hits,
the second hop, one writer at a time. The PostgreSQL server is started by the tests (`pg_url`)."""

from __future__ import annotations

import threading

import pytest

from conftest import index_corp, store_settings, write
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter
from kb_agent.store.base import KBBusy

ALL = AccessFilter.unrestricted()
MODES = ["bm25", "dense", "hybrid", "grep"]
RESTRICTED = {"corp/hr/salaries.md", "corp/exec/merger.md"}


@pytest.fixture(params=["embedded", "postgres"])
def backend(request) -> str:
    return request.param


@pytest.fixture
def store_engine(backend, request, tmp_path, embedder):
    url = request.getfixturevalue("pg_url") if backend == "postgres" else None
    engine = Engine(store_settings(backend, tmp_path / "data", url), embedder=embedder)
    yield engine
    engine.close()


@pytest.fixture
def corp(store_engine, tmp_path):
    return index_corp(store_engine, tmp_path / "corp")


def _paths(engine, query, mode="bm25", groups=None, k=50, hops=1):
    access = ALL if groups is None else AccessFilter.for_groups(groups)
    return [h.path for h in engine.search(query, access=access, mode=mode, k=k, hops=hops).hits]


@pytest.mark.parametrize("mode", MODES)
def test_acl_in_every_mode(corp, mode):
    assert set(_paths(corp, "zebracorn", mode, ["eng"])) & RESTRICTED == set()
    assert set(_paths(corp, "zebracorn", mode, [])) & RESTRICTED == set()
    assert set(_paths(corp, "zebracorn", mode, ["hr"])) & RESTRICTED == {"corp/hr/salaries.md"}
    assert set(_paths(corp, "zebracorn", mode, ["board"])) & RESTRICTED == {"corp/exec/merger.md"}
    assert set(_paths(corp, "zebracorn", mode, ["HR", "hr*", "__public__"])) & RESTRICTED == set()
    assert "corp/handbook.md" in _paths(corp, "vacation policy days", mode, [])


def test_acl_filter_is_inside_the_query(store_engine, tmp_path):
    root = tmp_path / "kb"
    for i in range(40):  # public near-duplicates that outrank the one allowed restricted document
        write(root / "noise" / f"n{i}.md", f"# N{i}\nquarterly report quarterly report quarterly report {i}\n")
    write(root / "fin" / ".kbacl", "finance\n")
    write(root / "fin" / "q3.md", "# Q3\nquarterly report with the real numbers\n")
    store_engine.index([root])
    store_engine.embed()
    for mode in ("bm25", "dense", "hybrid"):
        assert _paths(store_engine, "quarterly report", mode, ["finance"], k=60).count("kb/fin/q3.md") == 1, mode
        assert "kb/fin/q3.md" not in _paths(store_engine, "quarterly report", mode, ["eng"], k=60), mode


def test_incremental_edit_delete_and_rename(store_engine, tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nthe old walrus content\n")
    write(root / "b.md", "# B\nthe pelican lives here\n")
    write(root / "c.md", "# C\nthe octopus guide\n")
    first = store_engine.index([root])
    assert first.chunks_added == 3
    again = store_engine.index([root])
    assert (again.chunks_added, again.chunks_removed) == (0, 0)

    write(root / "a.md", "# A\nthe new narwhal content\n")
    (root / "b.md").unlink()
    (root / "c.md").rename(root / "renamed.md")
    store_engine.index([root])
    store_engine.embed()
    for mode in ("bm25", "hybrid"):
        assert _paths(store_engine, "walrus", mode="bm25") == []
        assert _paths(store_engine, "narwhal", mode=mode)[0] == "docs/a.md"
        assert "docs/b.md" not in _paths(store_engine, "pelican", mode=mode)
        assert _paths(store_engine, "octopus guide", mode=mode)[0] == "docs/renamed.md"
    assert "docs/c.md" not in _paths(store_engine, "octopus guide", mode="dense")
    kb = store_engine.kb()
    assert kb.chunk_count() == 2 and kb.catalog.count_files() == 2
    assert len(kb.vectors) == 2  # no vector outlives its chunk


def test_crash_in_the_middle_of_a_write_keeps_the_previous_state(store_engine, tmp_path, monkeypatch):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nthe old walrus content\n")
    store_engine.index([root])
    kb = store_engine.kb()
    write(root / "a.md", "# A\nthe new narwhal content\n")
    write(root / "b.md", "# B\nthe second file\n")
    original, calls = kb.replace_file, []

    def dies_on_second_file(record, chunks):
        calls.append(record.source)
        if len(calls) == 2:
            raise RuntimeError("power cut")
        return original(record, chunks)

    monkeypatch.setattr(kb, "replace_file", dies_on_second_file)
    with pytest.raises(RuntimeError, match="power cut"):
        store_engine.index([root])
    monkeypatch.undo()
    assert _paths(store_engine, "walrus") == ["docs/a.md"]
    assert _paths(store_engine, "narwhal") == [] and _paths(store_engine, "second file") == []
    assert kb.chunk_count() == 1
    report = store_engine.index([root])  # the next run completes normally
    assert report.chunks_added == 2
    assert _paths(store_engine, "narwhal") == ["docs/a.md"]


def test_hits_are_line_exact(store_engine, tmp_path):
    root = tmp_path / "docs"
    body = "".join(f"Paragraph {i} talks about topic{i} in detail.\n\n" for i in range(300))
    path = write(root / "long.md", "# Long\n\n" + body)
    store_engine.index([root])
    lines = path.read_text().splitlines()
    hits = store_engine.search("topic250", access=ALL, mode="bm25", k=1).hits
    assert hits and hits[0].path == "docs/long.md"
    span = "\n".join(lines[hits[0].start_line - 1 : hits[0].end_line])
    text_lines = [line for line in hits[0].text.splitlines() if line.strip()]
    assert "topic250 " in span and span.strip().startswith(text_lines[0]) and span.strip().endswith(text_lines[-1])


def test_second_hop(store_engine, tmp_path):
    root = tmp_path / "films"
    write(root / "kiss_and_tell.md", "# Kiss and Tell\nKiss and Tell is a 1945 comedy film starring Shirley Temple.\n")
    write(root / "people" / "shirley_temple.md", "# Shirley Temple\nShe later served as Ambassador to Ghana.\n")
    write(root / "people" / ".kbacl", "casting\n")
    for i in range(8):
        write(root / f"noise{i}.md", f"# Film {i}\nA comedy film released in 194{i} with unknown players.\n")
    store_engine.index([root])
    question = "Which position was held by the star of the film Kiss and Tell?"
    two = _paths(store_engine, question, "bm25", ["casting"], k=4, hops=2)
    assert "films/people/shirley_temple.md" in two
    assert "films/people/shirley_temple.md" not in _paths(store_engine, question, "bm25", ["eng"], k=4, hops=2)


def test_one_writer_at_a_time(store_engine, tmp_path, embedder):
    write(tmp_path / "docs" / "a.md", "# A\nx\n")
    store_engine.index([tmp_path / "docs"])
    other = Engine(store_engine.settings, embedder=embedder)  # another process or host, as far as the store sees
    outcome: list[BaseException | None] = []

    def second_writer():
        try:
            with other.kb().writing():
                outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    try:
        with store_engine.kb().writing():
            thread = threading.Thread(target=second_writer)
            thread.start()
            thread.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], KBBusy)
        second_writer()  # once the first run is over, the next writer goes ahead
        assert outcome[1] is None
    finally:
        other.close()


def test_which_terms_a_caller_may_see_written_follows_the_acl(corp):
    """The vocabulary check (agent/vocabulary.py) asks which words some readable chunk holds: a word only a
    restricted page writes is unwritten for an outsider, as if the page did not exist."""
    from kb_agent.text.tokenize import tokenize

    zebracorn, vacation = tokenize("zebracorn")[0], tokenize("vacation")[0]
    lexical = corp.kb().lexical
    assert lexical.held_terms([zebracorn, vacation], AccessFilter.for_groups(["eng"])) == {vacation}
    assert lexical.held_terms([zebracorn, vacation], AccessFilter.for_groups(["hr"])) == {zebracorn, vacation}
    assert lexical.held_terms([zebracorn, "neverwritten"], ALL) == {zebracorn}


def test_fusion_weights_are_stored_with_the_knowledge_base(corp):
    from kb_agent.store.base import FusionWeights

    kb = corp.kb()
    assert kb.fusion_weights() is None
    with kb.writing():
        kb.set_fusion_weights(FusionWeights(1.0, 0.5, "30 questions"))
    assert kb.fusion_weights() == FusionWeights(1.0, 0.5, "30 questions")
    assert set(_paths(corp, "zebracorn", "hybrid", ["eng"])) & RESTRICTED == set()  # the ACL as before
    with kb.writing():
        kb.set_fusion_weights(None)
    assert kb.fusion_weights() is None


def _long_page(fact: str) -> str:
    """One section of about 1,700 characters (one chunk, longer than the 1,000 the embedder sees) that says
    `fact` only in its last line."""
    filler = [f"Line {i} lists alpha{i} beta{i} gamma{i} delta{i} epsilon{i} and zeta{i}." for i in range(30)]
    return "# Notes\n" + "\n".join(filler) + f"\n{fact}\n"


def _tail_vectors(kb) -> int:
    count = getattr(kb.vectors, "tail_count", None)  # PostgreSQL: a vector space of its own
    return count if count is not None else int((kb.vectors.ids() < 0).sum())


def _dense_score(engine, query: str, path: str, groups=None) -> float:
    access = ALL if groups is None else AccessFilter.for_groups(groups)
    kb = engine.kb()
    vector = engine.embedder().embed_query(query)
    chunks = kb.catalog.get_chunks(i for i, _ in kb.vectors.search(vector, 50, access))
    scores = dict(kb.vectors.search(vector, 50, access))
    return max((scores[i] for i, c in chunks.items() if c.chunk.path == path), default=0.0)


def test_a_long_chunks_last_lines_reach_dense_search_under_its_acl(store_engine, tmp_path):
    """The embedder sees a chunk's first 1,000 characters; the tail vector carries the rest, with the chunk's
    ACL, and goes with its chunk."""
    root = tmp_path / "kb"
    write(root / "hr" / ".kbacl", "hr\n")
    write(root / "hr" / "notes.md", _long_page("The quokka ledger closes on Fridays."))
    for i in range(5):
        write(root / f"n{i}.md", f"# N{i}\nunrelated page number {i} about gardening\n")
    store_engine.index([root])
    store_engine.embed()
    kb = store_engine.kb()
    assert _tail_vectors(kb) == 1 and len(kb.vectors) == 6  # six chunks, one of them long
    assert _paths(store_engine, "quokka ledger", "dense", ["hr"])[0] == "kb/hr/notes.md"
    assert _dense_score(store_engine, "quokka ledger", "kb/hr/notes.md", ["hr"]) > 0.0  # the control: 0.0
    assert "kb/hr/notes.md" not in _paths(store_engine, "quokka ledger", "dense", ["eng"])
    assert "kb/hr/notes.md" not in _paths(store_engine, "quokka ledger", "dense", [])

    (root / "hr" / "notes.md").unlink()
    store_engine.index([root])
    assert _tail_vectors(store_engine.kb()) == 0  # no vector outlives its chunk


def test_without_tail_vectors_the_last_lines_are_invisible_to_dense_search(backend, request, tmp_path, embedder):
    """Control: KB_AGENT_EMBED_TAILS=false, the same page; the query shares no term with the embedded head."""
    url = request.getfixturevalue("pg_url") if backend == "postgres" else None
    settings = store_settings(backend, tmp_path / "data", url).model_copy(update={"embed_tails": False})
    engine = Engine(settings, embedder=embedder)
    try:
        write(tmp_path / "kb" / "notes.md", _long_page("The quokka ledger closes on Fridays."))
        engine.index([tmp_path / "kb"])
        engine.embed()
        assert _tail_vectors(engine.kb()) == 0
        assert _dense_score(engine, "quokka ledger", "kb/notes.md") == 0.0
    finally:
        engine.close()
