"""Line-exactness: every chunk's text is exactly lines start..end of its source file."""

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb_agent.ingest.chunker import chunk_document, line_windows
from kb_agent.ingest.loaders import load
from kb_agent.ingest.loaders.text import split_lines

LINE = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=120),
    st.sampled_from(["", "# Title", "## Sub heading", "```", "```python", "- item", "中文段落，检索测试。", "   "]),
)


def _chunks(path: Path, max_chars: int, overlap: int):
    out = []
    for doc in load(path, path.read_bytes()):
        out += chunk_document(
            doc,
            kb="t",
            doc_id="d",
            source=str(path),
            path=path.name,
            acl=[],
            updated_at=0.0,
            max_chars=max_chars,
            overlap_chars=overlap,
        )
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(LINE, min_size=1, max_size=120),
    suffix=st.sampled_from([".md", ".txt", ".py"]),
    max_chars=st.integers(min_value=200, max_value=1500),
    overlap=st.integers(min_value=0, max_value=150),
    crlf=st.booleans(),
)
def test_every_chunk_is_exactly_its_line_span(tmp_path, lines, suffix, max_chars, overlap, crlf):
    path = tmp_path / f"doc{suffix}"
    newline = "\r\n" if crlf else "\n"
    path.write_bytes(newline.join(lines).encode("utf-8") + newline.encode())
    file_lines = split_lines(path.read_bytes().decode("utf-8"))
    for chunk in _chunks(path, max_chars, overlap):
        assert 1 <= chunk.start_line <= chunk.end_line <= len(file_lines)
        assert chunk.text == "\n".join(file_lines[chunk.start_line - 1 : chunk.end_line])


def test_windows_cover_every_line_respect_size_and_overlap():
    lines = [f"line {i} " + "x" * (i % 50) for i in range(300)]
    windows = line_windows(lines, max_chars=500, overlap_chars=100)
    covered = set()
    for start, end in windows:
        covered.update(range(start, end))
        if end - start > 1:
            assert sum(len(line) + 1 for line in lines[start:end]) <= 500
    assert covered == set(range(300))
    for (a1, b1), (a2, _) in itertools.pairwise(windows):
        assert a1 < a2 <= b1  # advances, and overlaps or touches
        assert sum(len(line) + 1 for line in lines[a2:b1]) <= 100


def test_a_single_huge_line_is_its_own_chunk():
    windows = line_windows(["short", "y" * 5000, "tail"], max_chars=300, overlap_chars=50)
    assert (1, 2) in windows


def test_markdown_chunks_carry_heading_path(tmp_path):
    path = tmp_path / "guide.md"
    body = "\n".join(f"Sentence number {i} about deployment." for i in range(60))
    path.write_text(f"# Guide\nintro\n## Deploy\n{body}\n## Rollback\nundo it\n")
    chunks = _chunks(path, max_chars=600, overlap=100)
    assert len(chunks) > 2
    assert any(c.heading_path == ["Guide", "Deploy"] for c in chunks)
    assert chunks[-1].heading_path[-1] in ("Rollback", "Deploy")
    assert all(c.chunk_id.startswith("d::") for c in chunks)
