"""Deterministic routing for the unambiguous cases: no LLM call when a rule decides."""

from __future__ import annotations

import re

from kb_agent.agent.state import Route

_CHITCHAT_EN = (
    r"hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: (?:so|very) much)?|"
    r"thx|ty|cheers|bye|goodbye|see you|who are you|what are you|what can you do|how are you|nice to meet you|"
    r"ok(?:ay)?|great|cool|awesome"
)
_CHITCHAT_ZH = r"你好|您好|嗨|哈喽|早上好|下午好|晚上好|晚安|谢谢|多谢|感谢|谢啦|再见|拜拜|你是谁|你能做什么|你好吗|好的|收到"
_CHITCHAT_RE = re.compile(
    rf"^\s*(?:(?:{_CHITCHAT_EN})(?:\s+(?:there|all|everyone|again|a lot|kb-agent|bot))?|(?:{_CHITCHAT_ZH})(?:你|您|啦|呀|啊)?)"
    r"[\s!！.。,，?？~～:)]*$",
    re.I,
)
TICKET_RE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b")
URL_RE = re.compile(r"https?://\S+")
_PATH_RE = re.compile(
    r"(?:[\w.-]+/)*[\w.-]+\.(?:md|mdx|rst|txt|py|js|ts|tsx|java|go|rs|sql|sh|ya?ml|json|toml|ini|cfg|conf|"
    r"pdf|docx|xlsx|csv|html?|jsonl)\b",
    re.I,
)
_QUOTED_RE = re.compile(r"[`\"“”']([^`\"“”'\n]{2,80})[`\"“”']")
_CONSTANT_RE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_FILE_DISCOVERY_RE = re.compile(
    r"\b(?:find|list|show|locate|which|what)\b.{0,30}\bfiles?\b|\bfiles? (?:named|called|about|containing)\b|"
    r"(?:查找|寻找|找到|列出|哪些|哪个).{0,15}文件",
    re.I,
)


def route_by_rules(query: str) -> tuple[Route, str] | None:
    """(route, rule name) when a rule decides, else None."""
    if _CHITCHAT_RE.match(query):
        return Route(query_type="chitchat", complexity="chitchat"), "greeting_or_thanks"
    for rule, pattern in (("ticket_key", TICKET_RE), ("url", URL_RE), ("file_path", _PATH_RE),
                          ("quoted_identifier", _QUOTED_RE), ("constant_identifier", _CONSTANT_RE)):
        found = pattern.findall(query)
        if found:
            keywords = list(dict.fromkeys(f.strip() for f in found if f.strip()))[:10]
            return Route(query_type="exact", complexity="simple", grep_keywords=keywords,
                         suggested_tools=["grep_search", "hybrid_search"]), rule
    if _FILE_DISCOVERY_RE.search(query):
        return Route(query_type="file_discovery", complexity="simple",
                     suggested_tools=["grep_search", "hybrid_search"]), "file_discovery"
    return None
