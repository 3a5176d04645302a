"""A change log's passage read from its release's heading: a long release chunked by section leaves its "###
Features" chunk below "## 0.82.0 (…)", and the version asked for must be a line the answer can quote and cite."""

from __future__ import annotations

from conftest import write
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval import release_headings

INTRO = "\n\n".join(f"Python 3.6 note {i}: this is probably one of the last releases to support it." for i in range(3))
FEATURES = "\n".join(
    f"* ✨ Feature number {i} adds a helper for {word}. PR #{4300 + i}." for i, word in enumerate(["cookies"] * 60)
)
CHANGELOG = (
    "# Release Notes\n\n## 0.83.0 (2022-09-11)\n\n### Fixes\n\n* 🐛 Fix a typo. PR #4400.\n\n"
    f"## 0.82.0 (2022-09-04)\n\n{INTRO}\n\n### Features\n\n"
    "* ✨ Export `WebSocketState` in `fastapi.websockets`. PR #4376.\n"
    f"{FEATURES}\n"
)


def _hit(engine, query: str):
    hits = engine.searcher().search(query, access=AccessFilter.unrestricted(), k=3, mode="bm25").hits
    return next(h for h in hits if "WebSocketState" in h.text)


def test_a_passage_under_a_release_heading_is_read_from_that_heading(engine, tmp_path):
    write(tmp_path / "kb" / "release-notes.md", CHANGELOG)
    engine.index([tmp_path / "kb"])
    hit = _hit(engine, "Export WebSocketState")
    lines = CHANGELOG.split("\n")
    assert hit.text.split("\n")[0] == "## 0.82.0 (2022-09-04)" == lines[hit.start_line - 1]
    assert hit.text.split("\n") == lines[hit.start_line - 1 : hit.end_line]  # still line-exact


def test_control_without_the_widening_the_version_is_only_in_the_heading_path(engine, tmp_path, monkeypatch):
    write(tmp_path / "kb" / "release-notes.md", CHANGELOG)
    engine.index([tmp_path / "kb"])
    monkeypatch.setattr(release_headings, "MAX_ABOVE", 0)
    hit = _hit(engine, "Export WebSocketState")
    assert "0.82.0" not in hit.text and any("0.82.0" in h for h in hit.heading_path)


def test_the_lines_above_are_read_only_from_chunks_the_caller_may_read(engine, tmp_path):
    """Defence in depth: the widening reads other chunks of the file, each checked against the caller's access."""
    write(tmp_path / "kb" / "hr" / ".kbacl", "hr\n")
    write(tmp_path / "kb" / "hr" / "release-notes.md", CHANGELOG)
    engine.index([tmp_path / "kb"])
    hr = AccessFilter.for_groups(["hr"])
    hits = engine.searcher().search("Export WebSocketState", access=hr, k=3, mode="bm25").hits
    hit = next(h for h in hits if "WebSocketState" in h.text)
    assert hit.text.startswith("## 0.82.0")  # hr reads it from the heading
    kb = engine.kb()
    below = kb.catalog.chunks_in_lines(hit.source, hit.end_line, hit.end_line)[0].chunk  # the hit as chunked
    plain = hit.model_copy(update={"text": below.text, "start_line": below.start_line, "end_line": below.end_line})
    outsider = AccessFilter.for_groups(["sales"])
    assert release_headings.with_release_heading(kb, plain, outsider) is plain  # never widened from unreadable lines
    widened = release_headings.with_release_heading(kb, plain, hr)  # control: the same call as a reader widens
    assert widened.text.startswith("## 0.82.0") and widened.start_line < plain.start_line


LONG_RELEASE = (
    "# Release Notes\n\n## 0.62.0 (2020-11-29)\n\n### Features\n\n"
    + "\n".join(f"* ✨ Feature {i}: a helper for sessions and tokens number {i}. PR #{2200 + i}." for i in range(70))
    + "\n\n### Docs\n\n"
    + "\n".join(f"* 📝 Fix a typo in the tutorial page number {i}. PR #{2300 + i}." for i in range(20))
    + "\n* ✨ Add Discord chat. PR #2322.\n"
)


def test_a_long_release_is_read_from_its_heading_far_above(engine, tmp_path, monkeypatch):
    """dev58 x5801 "FastAPI 在哪个版本加入了 Discord 聊天？": "Add Discord chat" sits 93 lines below "## 0.62.0"; the
    passage under "### Docs" held no version the answer could quote."""
    write(tmp_path / "kb" / "release-notes.md", LONG_RELEASE)
    engine.index([tmp_path / "kb"])
    hits = engine.searcher().search("Add Discord chat", access=AccessFilter.unrestricted(), k=3, mode="bm25").hits
    hit = next(h for h in hits if "Discord" in h.text)
    assert (
        hit.text.startswith("## 0.62.0")
        and hit.text.split("\n") == LONG_RELEASE.split("\n")[hit.start_line - 1 : hit.end_line]
    )
    monkeypatch.setattr(release_headings, "MAX_ABOVE", 12)  # control: the bound before
    hits = engine.searcher().search("Add Discord chat", access=AccessFilter.unrestricted(), k=3, mode="bm25").hits
    assert "0.62.0" not in next(h for h in hits if "Discord" in h.text).text


def test_another_release_heading_between_stops_the_widening(engine, tmp_path):
    """A heading path that names a release the lines above do not open (another release's heading comes first)
    leaves the passage as it is: widening up to "## 0.83.0" would quote the wrong release."""
    write(tmp_path / "kb" / "release-notes.md", CHANGELOG)
    engine.index([tmp_path / "kb"])
    kb = engine.kb()
    hit = _hit(engine, "Export WebSocketState")
    wrong = hit.model_copy(
        update={
            "heading_path": ["Release Notes", "0.83.0 (2022-09-11)", "Features"],
            "text": "\n".join(hit.text.split("\n")[6:]),
            "start_line": hit.start_line + 6,
        }
    )
    assert release_headings.with_release_heading(kb, wrong, AccessFilter.unrestricted()) is wrong
