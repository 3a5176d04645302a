"""A sentence that states a default: "X defaults to V" where a cited line states X's default as something else
is false, though the lines can hold every word of it (`allow_credentials ... True` appears in the docs, as a
condition)."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import normalise
from kb_agent.agent.evidence_lines import EvidenceLines

_DEFAULT_CLAIM = re.compile(
    r"(default(?:s| value)?(?: is| to| of [\w.]+ is)?|默认(?:值)?(?:是|为)?)\s*:?\s*"
    r"([\w.\[\]'\"-]+)"
)
# "the default minimum_size of GZipMiddleware is 500": the value follows "is", not "default"
_DEFAULT_OF = re.compile(
    r"default(?: value)?(?: of)?(?: the)? [\w.]+(?: (?:of|for|in) (?:the )?[\w.']+(?: [\w.]+)?)? (?:is|=)\s*:?\s*"
    r"([\w.\[\]'\"-]+)"
)
_DEFAULT_STATED = re.compile(
    r"defaults? (?:to|is|value is)\s*:?\s*([\w.\[\]'\"-]+)|默认(?:值)?(?:是|为)\s*([\w.\[\]'\"-]+)"
)
_NOT_A_VALUE = frozenset("of for in on the a an is to and or that this which".split())
_SUBJECT = re.compile(r"`([^`\s]{2,60})`|\b([A-Za-z]\w*_\w+|[A-Za-z]*[a-z][A-Z]\w*)\b")  # what a default is of


def contradicts_a_default(sentence: str, sources: list[EvidenceLines]) -> bool:
    """ "X defaults to V" where a cited source states X's default as something else (the lines can hold
    every word of a wrong claim: `allow_credentials ... True` appears in the docs, as a condition)."""
    said = normalise(sentence)
    of = _DEFAULT_OF.search(said)
    claimed = of or _DEFAULT_CLAIM.search(said)
    subject = _SUBJECT.search(sentence)
    if not claimed or not subject:
        return False
    value = claimed.group(claimed.lastindex or 0).strip(" .,'\"")
    name = normalise(subject.group(1) or subject.group(2))
    if not value or value == name or value in _NOT_A_VALUE:
        return False  # "the default max_age …", "the default value of …", "… by default.": no value read
    for lines in sources:
        for line in lines.texts:
            stated = _DEFAULT_STATED.search(line)
            at = line.find(name)
            if not stated or at < 0 or at > stated.start():
                continue  # a default stated for something else on this line
            if (stated.group(1) or stated.group(2)).strip(" .,'\"") != value:
                return True
    return False
