"""What the claim check compares: a sentence's checkable items and content words, normalised text, and
whole-word matching ("`str`" is not in "strict", 600 not in 6000)."""

from __future__ import annotations

import functools
import re
import unicodedata

from kb_agent.text.tokenize import EN_STOPWORDS, FUNCTION_WORDS, QUESTION_WORDS, ZH_STOPWORDS, has_cjk, tokenize

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*")
CODE = re.compile(r"`([^`\n]{1,80})`")
ENDED = r"(?:remov|drop|deprecat|delet|discontinu)\w*"  # words of a feature's end
ENDED_ZH = "(?:移除|删除|弃用|废弃|去掉|放弃|停止支持|不再支持)"
TELLS_AN_END = re.compile(rf"\b{ENDED}|\bno longer\b|{ENDED_ZH}|不再", re.I)  # (不再 holds 不再支持)
# a sentence that denies something ("the author never studied the spec", "没有研究过") needs cited lines that
# deny something too: the words of a line it negates are all there, its polarity is not
NEGATES = re.compile(
    r"\b(?:not|never|cannot|neither|nor|none|nothing|nobody|nowhere)\b|n't\b"
    r"|没有|没|不是|不能|不会|不可|不需要|不用|不必|不支持|不允许|从未|从不|未曾|无法|并非|别",
    re.I,
)
DENIES = re.compile(  # what a cited line may deny with: the sentence's words and any other of these
    NEGATES.pattern + r"|\b(?:no|without|instead|unless|only|except|avoid|prevent|disable[ds]?|forbid\w*)\b"
    r"|不|无|未|非|勿|禁|仅|只",
    re.I,
)
_QUOTED = re.compile(r"[\"“「『]([^\"”」』\n]{2,60})[\"”」』]")
IDENT = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9_]*(?:[._:/-][A-Za-z0-9_]+)+|[A-Za-z]*[a-z][A-Z]\w*|[A-Z]{2,}\w*"
    r"|[A-Za-z]+\d+\w*)\b|(?<![\w/])/[a-z](?:[\w/.-]*[\w/])?"
)
_WORD = re.compile(r"\b[A-Z][a-z]+\b")
LIST_MARK = re.compile(r"^\s*\d{1,3}[.)]\s+")
# words that start sentences or carry no claim of their own when capitalised
COMMON_CAPS = frozenset(
    """I A An The This That These Those It Its You Your Yes No Not In On At To For With By Of
And Or But If When Then So As From Here There What Which Who How Why Where Also Use Using Set Sets Note
Default Defaults Example For First Second Then Finally After Before Each Every Both Only Just Can May
Must Should Will Would Could Some Any All Most More Less One Two Three""".split()
)
# and what only answers use: "you" alone must not carry "… by using middleware" past the word floor
_ANSWER_FUNCTION_WORDS = "yours us he him his she her its they them very also"
_GENERIC_TERMS = frozenset(
    [
        *tokenize(" ".join([*QUESTION_WORDS, *FUNCTION_WORDS]) + " " + _ANSWER_FUNCTION_WORDS),
        *"default use set valu paramet can need mean".split(),
    ]
)


def normalise(text: str) -> str:
    """NFKC (full width -> half width), case-folded, markdown emphasis and punctuation runs folded."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("`", "")
    text = re.sub(r"\*{1,3}|(?<!\w)_{1,2}(?=\w)|(?<=\w)_{1,2}(?!\w)", "", text)  # emphasis, not snake_case
    return re.sub(r"\s+", " ", text)


def _norm_number(value: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", value)


def code_items(sentence: str) -> set[str]:
    """What a sentence writes as `code` (two characters or more), normalised."""
    return {normalise(m).strip() for m in CODE.findall(LIST_MARK.sub("", sentence)) if len(m.strip()) >= 2}


def checkable(sentence: str) -> set[str]:
    """Numbers, code spans, identifiers, quoted strings and named entities of a sentence, normalised."""
    sentence = LIST_MARK.sub("", sentence)  # "2. Set the command …": the 2 numbers the item, it states nothing
    items: set[str] = set()
    items |= {_norm_number(m) for m in _NUMBER.findall(sentence)}
    items |= code_items(sentence)
    items |= {normalise(m).strip() for m in _QUOTED.findall(sentence)}
    items |= {normalise(m) for m in IDENT.findall(sentence) if len(m) >= 2}
    bare = CODE.sub(" ", sentence)
    for match in _WORD.finditer(bare):  # a capitalised word inside a sentence names something
        word = match.group(0)
        start = match.start()
        before = bare[:start].rstrip()
        if word in COMMON_CAPS or not before or before[-1] in ".!?:;。！？：" or has_cjk(word):
            continue
        items.add(normalise(word))
    # an answer that is a name and nothing else ("Asyncer [1]"): its first word is the name, not a capital that
    # opens a sentence (read as words it was "async", which a release note about AnyIO holds)
    alone = _MARKERS_AND_MARKS.sub("", CODE.sub(" ", sentence)).strip()
    if _ONLY_A_NAME.fullmatch(alone):
        items |= {normalise(word) for word in alone.split() if word not in COMMON_CAPS}
    return {i for i in items if i and not i.isspace()}


_MARKERS_AND_MARKS = re.compile(r"\[\d+\]|[.。!?！？*\"“”]")
_ONLY_A_NAME = re.compile(r"[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,3}")


_VALUE = re.compile(r"^(?:\d[\d.,:/]*|true|false|none|null|/[\w/.-]+)$")


def is_value(item: str) -> bool:
    """Numbers, booleans, URL paths and anything quoted or code-formatted (it contains a space or symbol) are
    values: they must be on the cited lines. Plain names may be stated elsewhere in the same passage."""
    return bool(_VALUE.match(item)) or not re.fullmatch(r"[\w-]+", item)


@functools.lru_cache(maxsize=4096)
def _pattern(item: str) -> re.Pattern[str]:
    # a number is whole: 600 is not in 6000, nor 1 in "127.0.0.1" or "1.5" (a model wrote "keeps messages 1 天"
    # on the line giving that address), but 15 is in "09-15T15:53"; a word is whole, a plural allowed:
    # `str` is not in "strict", `operationId` is in "`operationId`s" (CJK may touch either)
    if item.isdigit():
        return re.compile(r"(?<![0-9])(?<![0-9]\.)" + item + r"(?![0-9])(?!\.[0-9])")
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(item) + r"(?:e?s)?(?![A-Za-z0-9_])")


def holds(text: str, item: str) -> bool:
    if re.fullmatch(r"[A-Za-z0-9_]+", item):
        return _pattern(item).search(text) is not None
    return item in text


LINK_TARGET = re.compile(r"\]\([^)]*\)")  # a link's URL is not the line's content


@functools.lru_cache(maxsize=4096)
def _code_pattern(item: str) -> re.Pattern[str]:
    # the word, whole, and not the head of a dotted name (`fastapi` is not `fastapi.websockets`)
    return re.compile(_pattern(item).pattern + r"(?!\.[A-Za-z_])")


def holds_code(text: str, item: str) -> bool:
    """A name the sentence writes as code is stated by the same whole name, outside link targets: a line saying
    `fastapi.websockets` and linking to github.com/tiangolo/fastapi/… does not state the module `fastapi`.
    Numbers, dotted names and paths are read as `holds` reads them."""
    if not re.fullmatch(r"[A-Za-z_]\w*", item):
        return holds(text, item)
    return _code_pattern(item).search(LINK_TARGET.sub("]", text)) is not None


def shown(sentence: str) -> set[str]:
    """What a sentence states that its cited lines themselves must show: its values, and whatever it writes as
    code - `float`, `str`, `jinja2` are values here, not names the passage may mention anywhere."""
    return {i for i in checkable(sentence) if is_value(i)} | code_items(sentence)


def content_terms(text: str) -> set[str]:
    return {
        t
        for t in tokenize(text)
        if t not in EN_STOPWORDS and t not in ZH_STOPWORDS and t not in _GENERIC_TERMS and len(t) > 1
    }


# units a number is read in; a sentence's "15 天" is not a line's "15 秒"
_UNITS = {
    "ms": "millisecond milliseconds ms 毫秒",
    "s": "second seconds sec secs 秒 秒钟",
    "min": "minute minutes min mins 分钟",
    "h": "hour hours hr hrs 小时 个小时",
    "d": "day days 天 日",
    "week": "week weeks 周 星期 个星期",
    "month": "month months 月 个月",
    "year": "year years 年",
    "byte": "byte bytes b 字节",
    "kb": "kb kib kilobyte kilobytes",
    "mb": "mb mib megabyte megabytes",
    "gb": "gb gib gigabyte gigabytes",
    "%": "% percent 百分比",
}
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words.split()}
_NUMBER_UNIT = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*("
    + "|".join(sorted(map(re.escape, _UNIT_OF), key=len, reverse=True))
    + r")(?![a-z])",
    re.I,
)


def number_units(text: str) -> set[tuple[str, str]]:
    """(number, unit) pairs a text states: "15 秒" -> ("15", "s"), "600 seconds" -> ("600", "s")."""
    return {(m.group(1), _UNIT_OF[m.group(2).lower()]) for m in _NUMBER_UNIT.finditer(text)}


# "the version of uv", "uv's version", "Python 3.10": a version number and the name it belongs to
VERSION_NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)*(?![\w.]*\w)")
_VERSION_OF = re.compile(r"\bversions?\s+of\s+(?:the\s+)?(?P<name>`?[A-Za-z][\w.+-]*`?)")
_NAME_VERSION = re.compile(r"(?P<name>`?[A-Za-z][\w.+-]*`?)(?:'s)?\s+versions?\b")
# "哪个版本的 attrs 库", "uv 的最低版本", "FastAPI 版本 0.67.0"
_VERSION_OF_ZH = re.compile(r"版本的\s*(?P<name>`?[A-Za-z][\w.+-]*`?)")
_NAME_VERSION_ZH = re.compile(r"(?P<name>`?[A-Za-z][\w.+-]*`?)\s*的?\s*(?:哪个|哪一个|什么|最低|最新)?\s*版本")
# words before "version" that name no owner: "the minimum version of …", "a newer version"
_NOT_OWNERS = frozenset(
    "the a an this that which what any every each its their your our minimum maximum latest current new newer "
    "older old specific exact required first last next previous earlier later stable same different major "
    "minor patch supported recommended pinned particular given".split()
)


OWNER_LINES = 2  # lines around a line giving a version number that may name what the version is of


def version_owner(text: str) -> str | None:
    """The name a version is said to be of ("the version of uv", "Python version"), lower-cased; None when the
    text names none ("the minimum version")."""
    owner = (
        _VERSION_OF.search(text)
        or _NAME_VERSION.search(text)
        or _VERSION_OF_ZH.search(text)
        or _NAME_VERSION_ZH.search(text)
    )
    return _owner_name(owner)


def _owner_name(owner: re.Match | None) -> str | None:
    """The name a pattern's "name" group holds, lower-cased; None for none, or for a word that names no owner."""
    name = owner.group("name").strip("`").lower() if owner else None
    return None if name is None or name in _NOT_OWNERS else name


# "Which port does the Traefik container listen on?", "Traefik 监听哪个端口？": the port of a named thing
_PORT_OF = re.compile(r"\b(?i:which port) (?:does|do|is|will|should|would) (?:the )?(?P<name>`?[A-Z][\w.+-]*`?)")
_PORT_OF_ZH = re.compile(r"(?P<name>`?[A-Za-z][\w.+-]*`?)\s*(?:容器|服务)?\s*(?:监听|使用|运行在)(?:哪个|什么)端口")


def port_owner(text: str) -> str | None:
    """The name a port is asked of ("Traefik"), lower-cased; None when the question names none."""
    return _owner_name(_PORT_OF.search(text) or _PORT_OF_ZH.search(text))


def names_word(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) is not None


# a heading's anchor ("## Pydantic `Settings` { #pydantic-settings }"): a link target, not words the page states
HEADING_ANCHOR = re.compile(r"\s*\{\s*#[^}]*\}")
