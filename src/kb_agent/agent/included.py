"""Asked for a thing the product *comes with* ("Which GraphQL library comes built into FastAPI?", "FastAPI 内置的
任务队列叫什么？"): the answer must be a line saying the product includes such a thing. A line naming some queue or
some GraphQL library the reader may add ("使用其他更大的工具（如 Celery）", "libraries … you could use with FastAPI")
answers another question, and the claim check cannot see that: every word it quotes is on the line."""

from __future__ import annotations

import re

from kb_agent.text.tokenize import cut_chinese, has_cjk, tokenize
from kb_agent.tools.base import Evidence

_STOP = r"(?:for|in|to|of|that|which|when|with|and|or|is|are|does|do|did|can|could|should|would|will|by|on|at)"
_NOUN = r"[A-Za-z][\w-]*"
# "FastAPI's built-in rate limiter", "the bundled test client"
_BUILT_IN_EN = re.compile(
    rf"\b(?:built[- ]?in|builtin|bundled)\s+((?:(?!{_STOP}\b){_NOUN}\s+){{0,3}}(?!{_STOP}\b){_NOUN})", re.I
)
# "Which GraphQL library comes built into FastAPI?", "What server ships with FastAPI?", "Which ORM does FastAPI
# ship with?"
_THING = rf"((?:(?!{_STOP}\b){_NOUN}\s+){{0,2}}?(?!{_STOP}\b){_NOUN})"
_WHICH_COMES_EN = re.compile(
    rf"\b(?:which|what)\s+{_THING}\s+(?:(?:comes?|is|are|ships?|gets?)\s+"
    r"(?:built[- ]?in(?:to)?|bundled|included|shipped|(?:(?:built[- ]?in|bundled)\s+)?with)\b"
    r"|(?:does|do|did)\s+\S+\s+(?:ship|come|bundle)\s+with\b)",
    re.I,
)
# "FastAPI 内置的任务队列叫什么？", "自带的消息队列默认保留多少天"
_BUILT_IN_ZH = re.compile(
    r"(?:内置|自带|附带)(?:的)?([A-Za-z\u4e00-\u9fff]{2,10}?)(?=叫|是|怎么|如何|默认|有|能|可以|会|的|用|在|[？?，,。]|$)"
)
# a line saying the product has the thing: it includes, provides, comes or ships with it, it is built in
_INCLUDES = re.compile(
    r"\bbuilt(?:in)?\b|\bbundl\w*|\bship(?:s|ped)? with\b|\bcomes? with\b|\binclud\w*|\bprovid\w*|\bintegrated\b"
    r"|\bout[ -]of[ -]the[ -]box\b|\bnative(?:ly)?\b|内置|自带|附带|包含|包括|提供|集成",
    re.I,
)


def asked_inclusion(question: str) -> str | None:
    """The thing a question asks the product comes with ("GraphQL library", "任务队列"); None when it asks none."""
    for pattern in (_WHICH_COMES_EN, _BUILT_IN_EN, _BUILT_IN_ZH):
        if (found := pattern.search(question)) is not None:
            return found.group(1).strip()
    return None


def _head(thing: str) -> set[str]:
    """The analysed forms of the thing's head noun: its last English word, or its last Chinese word."""
    if has_cjk(thing):
        words = [w for w in cut_chinese(thing) if has_cjk(w)]
        return {words[-1]} if words else set()
    return set(tokenize(thing.split()[-1]))


def inclusion_unstated(question: str, sources: list[Evidence]) -> str | None:
    """The thing the question asks the product comes with, when no line of the sources both says something is
    included (built in, provided, comes with, 内置, 自带, 包含 …) and names that kind of thing; None when the
    question asks no such thing or a line says it."""
    thing = asked_inclusion(question)
    if thing is None or not sources:
        return None
    head = _head(thing)
    if not head:
        return None
    for e in sources:
        for line in e.text.split("\n"):
            if not _INCLUDES.search(line):
                continue
            held = set(tokenize(line))
            if head & held or any(has_cjk(h) and h in line for h in head):
                return None
    return thing
