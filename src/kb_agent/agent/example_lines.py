"""The line of an example that answers what the line introducing it only announces: asked "Under which key does
the OpenAPI schema declare that the API server is located at /api/v1?", "… declare that this API `server` is
located at `/api/v1` … For example:" is quoted with the block's highlighted `"servers": [`; asked which version
"… a JSON starting with something like:", with `"openapi": "3.1.0",`."""

from __future__ import annotations

import re

from kb_agent.agent import answer_types
from kb_agent.agent.evidence_following import LIST_ITEM_CHARS, block_ending, example_lines
from kb_agent.agent.evidence_units import Unit
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


# asked what comes back ("What response do I get when …?", "响应是什么？"): the example a line announcing the
# response introduces is the answer ("The response would be like:" / {"X-Token values": ["bar", "foo"]})
ASKS_OUTPUT = re.compile(
    r"\bwhat (?:\w+ ){0,2}?(?:response|output|result)s?\b(?!\s+(?:model|class|code|status|header|type)s?\b)"
    r"|\b(?:response|output|result) (?:would|will) (?:be|look)\b|\bwhat (?:do|does|would|will) \w+ (?:get|see) back\b"
    # "… what does `Item ID: {{ id }}` render when the ID is 42?": under a condition too
    # "What does the Flask app mounted at /v1/ respond with?": "… you will see the response from Flask:" shows it
    r"|\bwhat (?:do|does|did|would|will)\b[^?]*\b(?:respond|reply) with\b"
    r"|\bwhat\b[^?]*\b(?:render|be rendered)\b(?:,?\s+(?:when|if|for|with)\b[^?]*)?\s*\??\s*$|\brenders? (?:as|to|into) what\b"
    r"|响应(?:结果)?(?:是|会是)什么|返回(?:的)?(?:结果|内容)是什么|输出(?:是)?什么|得到什么(?:响应|结果)|渲染(?:成|为|出)什么",
    re.I,
)
_ANNOUNCES_OUTPUT = re.compile(r"\b(?:response|output|result)s?\b|\brender(?:s|ed)?\b|响应|输出|结果|渲染", re.I)
OUTPUT_LINES = 10  # an example longer than this is a program, not the response it shows


def output_example(unit: Unit, evidence: Evidence) -> str:
    """The short example a line announcing the response, output or result introduces ("The response would be
    like:"), on one line - what answers a question asking what comes back (`ASKS_OUTPUT`); "" otherwise."""
    if not _ANNOUNCES_OUTPUT.search(unit.text) or not unit.text.rstrip().endswith((":", "：")):
        return ""
    lines = example_lines(unit, evidence)
    if not lines or len(lines) > OUTPUT_LINES or any(line.startswith(("{!", "{*")) for line in lines):
        return ""
    return " ".join(lines)  # as the lines write it: a claim is checked against them
