"""Questions about what a word means or what a thing is called, and the lines that answer them: "What is a
callback?" by the line that defines the word ("… is named a "callback""), "What are types that take type
parameters called?" by the line that gives a name the question does not say ("… are called **Generic types**")."""

from __future__ import annotations

import re

from kb_agent.agent.evidence_units import LINK_TARGET, terms
from kb_agent.text.tokenize import tokenize

# asked for a name, not a definition: "What are types that take type parameters called?", "…叫什么？"
ASKS_NAME = re.compile(
    r"^\s*what (?:is|are|'s)\b.+\b(?:called|named|known as)\s*[?？]?\s*$|叫(?:做)?什么|称为什么|被称为什么", re.I
)
_DEFINES = re.compile(
    r"\b(?:is|are)\s+(?:named|called|known as|referred to as)\s+(?:an?\s+|the\s+)?[\"“*_`']*([\w-]+)"
    # ('"**Streaming**" data means that your app will start sending …': the word and the noun it qualifies)
    r"|^(?:an?\s+|the\s+)?[\"“*_`']*([\w-]+)[\"”*_`']*(?:\s+[a-z]+)?\s+(?:is|are|means|refers to)\s+(?:an?|the|when|what|that)\b"
    r"|(?:称为|叫做|被称作|称作)\s*[“\"*`]*([\w-]+)"
    r"|^[\"“*_`']*([A-Za-z][\w-]*)[\"”*_`']*\s*是(?:一个|一种|一款|一套)",
    re.I,
)
# "For that, **FastAPI** provides a `jsonable_encoder()` function." says what the function is for, with the line
# before it (which the extractive answer brings along)
FOR_THAT = re.compile(r"^(?:for (?:that|this|these|those)\b[^,，]{0,20}[,，]|为此|为了(?:这|那))", re.I)


def asks_name(question: str) -> bool:
    return bool(ASKS_NAME.search(question))


def _defined_words(text: str) -> list[str]:
    """The words a line defines or names ("… is called X", "X is a …", "称为 X"), links' addresses left out."""
    return [next((g for g in m.groups() if g), "") for m in _DEFINES.finditer(LINK_TARGET.sub("]", text))]


def defines(text: str, asked: set[str]) -> bool:
    """The line defines one of the question's key terms ("… is named a "callback"", or gives its purpose by
    pointing back: "For that, FastAPI provides `jsonable_encoder()`")."""
    if FOR_THAT.match(text) and terms(text) & asked:
        return True
    return any(set(tokenize(word)) & asked for word in _defined_words(text))


# what a thing is, given as a quoted word: 'Flask 是一个"微框架"', 'Flask is a "microframework"'
_QUOTED_KIND = re.compile(r"(?:\b(?:is|are)\s+an?|是(?:一个|一种|一款))\s*[“\"]([^”\"\s]{1,24})[”\"]", re.I)


def gives_name(text: str, asked_words: set[str]) -> bool:
    """The line names something with a word the question does not say: asked what things are called, "… are
    called "type parameters"" restates the question's own words."""
    # (a line's subject is not a name it gives: "FastAPI 是一个 … 框架" does not say what Flask is called)
    plain = LINK_TARGET.sub("]", text)
    called = [m.group(1) or m.group(3) for m in _DEFINES.finditer(plain)]
    words = [*called, *_QUOTED_KIND.findall(plain)]
    return any(word and not set(tokenize(word)) <= asked_words for word in words)
