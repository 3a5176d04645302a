"""The line of an example that answers what the line introducing it only announces: asked "Under which key does
the OpenAPI schema declare that the API server is located at /api/v1?", "… declare that this API `server` is
located at `/api/v1` … For example:" is quoted with the block's highlighted `"servers": [`; asked which version
"… a JSON starting with something like:", with `"openapi": "3.1.0",`."""

from __future__ import annotations

import re

from kb_agent.agent import answer_types
from kb_agent.agent.evidence_units import LIST_ITEM_CHARS, Unit, block_ending, example_lines
from kb_agent.agent.name_kinds import has_shape, keys_kind, new_names
from kb_agent.tools.base import Evidence

KEY_KINDS = frozenset({"key", "field", "键", "字段"})
# a key a line sets: `"servers": [`, `servers:`, `"url": "/api/v1"`; not `http://…` nor a `::` scope
_KEY = re.compile(r"""^["']?([A-Za-z_][\w-]*)["']?\s*:(?![:/])""")


def answering_line(unit: Unit, evidence: Evidence, question: str, kind: str | None, types: list[int]) -> str:
    """The first line of the example `unit` introduces that gives what the question asks - a key, a name of the
    kind asked, the value types asked (`answer_types`) - and the question does not; "" when none does, or the
    question asks for no such thing."""
    if not (kind or types):
        return ""
    # the short block a sentence runs on into ("… to the local API at" / ``` / the URL) is its end
    lines = block_ending(unit, evidence)
    if not lines and not unit.text.rstrip().endswith((":", "：")):
        return ""
    asked = question.lower()
    for line in lines or example_lines(unit, evidence):
        if len(line) > LIST_ITEM_CHARS or line.startswith(("{!", "{*")):
            continue
        if kind in KEY_KINDS:
            key = _KEY.match(line)
            gives = key is not None and key.group(1).lower() not in asked
        else:
            # a kind with no shape of its own ("option", "type") is named only as a key: `"type": "value_error"`;
            # any quoted string would pass for one (`"detail": [`)
            shaped = kind is not None and has_shape(kind) and bool(new_names(line, question, kind))
            gives = kind is None or shaped or keys_kind(line, kind)
        if gives and answer_types.states_each(types, line, question):
            return line
    return ""
