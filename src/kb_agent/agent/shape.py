"""The question's shape, read by rules a small model cannot spoil: is it plainly one lookup, does it need
several steps (a comparison, a relative clause, a possessive chain), or is it unclear?

analyze_and_route asks the LLM router only when the shape is not plainly simple: a simple question then
costs one model call (the answer) instead of two, the larger part of its latency on a CPU."""

from __future__ import annotations

import re
from typing import Literal

from kb_agent.text.tokenize import has_cjk

Shape = Literal["simple", "multi_step", "unsure"]

# a comparison word compares two things the question names: "Which servers should Uvicorn be compared against?"
# asks for a list in one lookup, "Are Nantong and Jingdezhen in the same province?" compares two
_COMPARES = re.compile(r"\b(both|neither|either|same|different|compared?|comparison)\b", re.I)
_TWO_THINGS = re.compile(r"\b(and|or|nor|than|between|from)\b|,", re.I)
_MULTI_STEP_EN = [
    re.compile(r"\b(?:versus|(?-i:[Vv]s)\b\.?)", re.I),  # "VS Code" is an editor, not a comparison
    re.compile(
        r"\b(older|younger|earlier|later|larger|smaller|bigger|longer|shorter|higher|lower|more|less|fewer|"
        r"first|last|before|after)\b.*\b(than|or)\b",
        re.I,
    ),
    re.compile(r"\w['’]s\b[^?]*\b\w+['’]s\b"),  # possessive chain: "X's Y's"
    re.compile(r"\bof the \w+(?:\s+\w+)? (?:of|that|which|who)\b", re.I),
]
# 哪个 alone is "which" (在后台运行任务要使用哪个类？ is one lookup); 更 + an adjective compares
_MULTI_STEP_ZH = re.compile(
    r"(分别|同一|相同|不同|比较|相比|还是|更(?:早|晚|大|小|多|少|高|低|长|短|老|好|快|慢)|的.{1,12}的.{1,12}的)"
)
_RELATIVE_CLAUSE = re.compile(r"\b(?:the|a|an)\s+\w+(?:\s+\w+)?\s+(?:that|which|who|whose|where)\b", re.I)
# asked why, or how to do something, a relative clause describes what the question is about, which the page
# names: "Why is the shutdown event handler that writes to a file declared with def?" is one lookup, not a chain
_REASON_OR_WAY = re.compile(r"^\s*(?:why\b|how\s+(?:do|does|can|could|should|would)\s+(?:i|we|you)\b)", re.I)
_JOINED_EN = re.compile(r"\b(and|or|but|while|whereas)\b|[,;]", re.I)
_JOINED_ZH = re.compile(r"[，,；;和与及]")


def question_shape(query: str) -> Shape:
    text = query.strip()
    if has_cjk(text):
        if _MULTI_STEP_ZH.search(text):
            return "multi_step"
        return "simple" if len(text) <= 30 and not _JOINED_ZH.search(text) else "unsure"
    if (
        any(pattern.search(text) for pattern in _MULTI_STEP_EN)
        or (_RELATIVE_CLAUSE.search(text) and not asks_reason_or_way(text))
        or (_COMPARES.search(text) and _TWO_THINGS.search(text))
    ):
        return "multi_step"
    return "simple" if len(text.split()) <= 14 and not _JOINED_EN.search(text) else "unsure"


def asks_reason_or_way(question: str) -> bool:
    """Why, or how do I: one lookup of the thing the question describes, whatever clause describes it."""
    return bool(_REASON_OR_WAY.search(question))


# a second question joined to the first: "what do I raise and how do I declare …", "…，还要怎么…" ("On a Kubernetes
# cluster, how many …" is one question: a comma alone joins none in English)
_SECOND_QUESTION_EN = re.compile(
    r"(?:\b(?:and|or|but)|;)\s+(?:also\s+\w+|how|what|which|where|why|when|who|whether|"
    r"(?:can|do|does|should|is|are)\s+(?:i|we|you|it|they)\b)",
    re.I,
)
_SECOND_QUESTION_ZH = re.compile(r"[，,；;].{0,6}(?:怎么|如何|怎样|什么|哪|为什么|是否|能否|要不要)")


def asks_two_things(query: str) -> bool:
    """Two questions in one (their answers may sit on two pages): the router's sub-questions can help."""
    return bool((_SECOND_QUESTION_ZH if has_cjk(query) else _SECOND_QUESTION_EN).search(query))
