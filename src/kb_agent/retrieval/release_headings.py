"""A change log's passage read from its release's heading. Chunked by section, a long release splits: its
"### Features" chunk starts below "## 0.82.0 (2022-09-04)", and the version a question asks for ("Which version
exported `WebSocketState`?") is in no line the passage holds - only in its heading path, which cannot be cited.
The hit is widened up to that heading when it is within MAX_ABOVE lines, so the version is quoted from its own
line."""

from __future__ import annotations

import re

from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.types import SearchHit
from kb_agent.store.base import KnowledgeBase
from kb_agent.store.catalog import lines_of

RELEASE = re.compile(r"v?\d+\.\d+(?:\.\d+)*\b")  # a release's heading: "0.104.0 (2023-10-18)", "v2.1"
MAX_ABOVE = 120  # lines between the heading and the passage: a long release's earlier notes (0.62.0 has 95)


def with_release_heading(kb: KnowledgeBase, hit: SearchHit, access: AccessFilter) -> SearchHit:
    """The hit from its release's heading line down, or the hit as it was (no release heading in its path, the
    heading already in its text, too far above, another release's heading between, lines not held line-exact,
    or a chunk the caller may not read)."""
    heading = next((h for h in reversed(hit.heading_path) if RELEASE.match(h)), None)
    if heading is None or heading in hit.text or hit.start_line <= 1:
        return hit
    first = max(1, hit.start_line - MAX_ABOVE)
    stored = kb.catalog.chunks_in_lines(hit.source, first, hit.start_line - 1)
    if not stored or not all(access.allows(s.chunk.acl) for s in stored):
        return hit
    lines = lines_of(stored)
    for number in range(hit.start_line - 1, first - 1, -1):
        line = lines.get(number)
        if line is None:
            return hit  # a gap: the lines above are not the file's own
        if line.startswith("#") and heading not in line and RELEASE.match(line.lstrip("# ")):
            return hit  # another release's heading: the path's heading is not above this passage
        if line.startswith("#") and heading in line:
            above = [lines[n] for n in range(number, hit.start_line)]
            return hit.model_copy(update={"text": "\n".join([*above, hit.text]), "start_line": number})
    return hit
