"""The second retrieval hop: documents named by the top passages join the results, within the caller's ACL."""

from __future__ import annotations

import pytest
from tests.conftest import write

from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.hops import TitleTable, normalize_title

FILM = "# Kiss and Tell\nKiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.\n"
ACTRESS = "# Shirley Temple (actress)\nShe later served as United States Ambassador to Ghana and to Czechoslovakia.\n"
NOISE = [f"# Film {i}\nA comedy film released in 194{i % 10} with a cast of unknown players.\n" for i in range(12)]
QUESTION = "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"


@pytest.fixture
def films(engine, tmp_path):
    root = tmp_path / "films"
    write(root / "kiss_and_tell.md", FILM)
    write(root / "people" / "shirley_temple.md", ACTRESS)
    write(root / "people" / ".kbacl", "casting\n")
    for i, text in enumerate(NOISE):
        write(root / f"noise{i}.md", text)
    engine.index([root])
    engine.embed()
    return engine


def _paths(response):
    return [h.path for h in response.hits]


def test_normalize_title_drops_disambiguation():
    assert normalize_title("Shirley Temple (actress)") == "shirley temple"
    assert normalize_title("Kiss and Tell") == "kiss and tell"


def test_title_table_finds_mentions_in_order():
    table = TitleTable(0, {"shirley temple": [("a", 1)], "kiss and tell": [("b", 2)]})
    assert table.mentions("Kiss and Tell starred Shirley Temple; Shirley Temple again") == [
        "kiss and tell",
        "shirley temple",
    ]


def test_second_hop_adds_the_named_document(films):
    members = AccessFilter.for_groups(["casting"])
    one = films.search(QUESTION, access=members, k=2, mode="bm25")
    two = films.search(QUESTION, access=members, k=4, mode="bm25", hops=2)
    assert "films/people/shirley_temple.md" not in _paths(one)[:2]
    assert _paths(two)[0] == "films/kiss_and_tell.md"
    linked = [h for h in two.hits if h.path == "films/people/shirley_temple.md"]
    assert linked and linked[0].scores.get("link") == 1.0


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_second_hop_never_reaches_documents_outside_the_acl(films, mode):
    outsider = AccessFilter.for_groups(["press"])
    response = films.search(QUESTION, access=outsider, k=10, mode=mode, hops=2)
    assert response.hits, "public documents are still found"
    assert all(not h.path.startswith("films/people/") for h in response.hits)


def test_agent_main_search_follows_named_documents_for_members_only(films, settings):
    from kb_agent.governance.identity import UserContext

    films.settings = settings.model_copy(update={"evidence_top_k": 3})

    def evidence_paths(user):
        return [e["path"] for e in films.answer_query(QUESTION, user=user).evidence]

    assert "films/people/shirley_temple.md" in evidence_paths(UserContext(user_id="c", groups=["casting"]))
    assert not any(p.startswith("films/people/") for p in evidence_paths(UserContext(user_id="p", groups=["press"])))
    # the control: neither the title hop nor the multi-step search (which finds her too) runs
    films.settings = settings.model_copy(update={"evidence_top_k": 3, "search_hops": 1, "multi_step": False})
    assert "films/people/shirley_temple.md" not in evidence_paths(UserContext(user_id="c", groups=["casting"]))


def test_generic_titles_are_not_links(engine, tmp_path):
    root = tmp_path / "kb"
    write(root / "comedy.md", "# Comedy\nComedy is a genre of fiction.\n")
    write(root / "film.md", "# Kiss and Tell\nKiss and Tell is a comedy starring Shirley Temple.\n")
    write(root / "temple.md", "# Shirley Temple\nShe became a diplomat.\n")
    for i in range(25):  # "comedy" is everywhere: not a specific name
        write(root / f"review{i}.md", f"# Review {i}\nAnother comedy review number {i}.\n")
    engine.index([root])
    hits = engine.search(
        "What job did the star of Kiss and Tell have later?",
        access=AccessFilter.unrestricted(),
        k=6,
        mode="bm25",
        hops=2,
    ).hits
    linked = {h.path for h in hits if h.scores.get("link")}
    assert "kb/temple.md" in linked and "kb/comedy.md" not in linked


@pytest.mark.parametrize(
    ("route", "hops"),
    [
        ({"query_type": "conceptual", "decided_by": "llm"}, 2),
        ({"query_type": "exact", "decided_by": "llm"}, 2),  # a model's "exact" is a soft signal
        ({"query_type": "exact", "decided_by": "ticket_key", "grep_keywords": ["LANG-1"]}, 1),
        ({"query_type": "file_discovery", "decided_by": "file_discovery"}, 1),
    ],
)
def test_the_main_search_takes_two_hops_unless_a_rule_found_an_exact_key(route, hops, settings):
    from kb_agent.agent.plan import _table_calls
    from kb_agent.tools.registry import default_tools

    ctx = type("Ctx", (), {"tools": default_tools(), "settings": settings, "term_weights": None})()
    calls = _table_calls(ctx, route, ["What did LANG-1 change?"])
    main = next(c for c in calls if c["name"] == "hybrid_search")
    assert main["args"].get("hops", 1) == hops
