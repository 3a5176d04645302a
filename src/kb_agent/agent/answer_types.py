"""What kind of answer a question asks for - a version, a number, an address, an end - and whether a line
states one: asked "What is the maximum size …?", a line that gives no number cannot answer, however many of the
question's words it says. Also what a question asking for a default needs: a line that says "default"."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection

from kb_agent.agent.claim_terms import ENDED, ENDED_ZH, TELLS_AN_END
from kb_agent.agent.evidence_units import LINK_TARGET
from kb_agent.text.tokenize import EN_STOPWORDS, cut_chinese, has_cjk, tokenize

# a digit inside a name ("OAuth2", "tutorial003") is no number a line states, nor "one" as a pronoun ("this is
# the one that will validate …"), nor 一 in a word of manner or degree (一样, 一些, 一定; 同一个 "the same one" is one);
# "only … a single" counts one ("You only give `Depends` a single parameter"), "a single `Hero`" alone does not
_NUMBER = re.compile(
    r"(?<![A-Za-z_])\d|(?<!\bthe )(?<!\bthis )(?<!\bthat )(?<!\bwhich )(?<!\beach )(?<!\bany )(?<!\bno )\bone\b"
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?|millions?|once|twice|"
    r"dozens?|half)\b|\bonly\s+(?:\S+\s+){0,4}?single\b|(?<![统同唯万])一(?![些样起旦般直定切下致边])|同一(?=[个台份条种])|单个|[二两三四五六七八九十百千万]",
    re.I,
)
# a release ("FastAPI 0.108.0") is no quantity: asked a maximum size, a line giving only one states none
_VERSION = re.compile(r"\bv?\d+\.\d+\.\d+\b")
_DEFAULT = re.compile(r"\bdefault|默认|缺省", re.I)
# asked what a thing defaults to - not "Which IP address does it listen on by default?", which asks what it does
_ASKS_DEFAULT = re.compile(r"(?<!\bby )\bdefault(?!ly)|默认(?!情况下|地)|缺省", re.I)
# a condition the question sets, not what it asks: "默认返回 200 的时候，…"
_CONDITION_ZH = re.compile(r"[^，,。？?]*(?:的时候|时候|时)\s*[，,]")
# and an English one opening the question: "If a parameter … has no default, can I call …?" asks whether it can be
# called, not a default value
_CONDITION_EN = re.compile(r"^\s*(?:if|when|whenever|once)\b[^,?]*,", re.I)
# a pull request's or issue's number and its author are no value a line states ("PR [#15800] by [@tiangolo]")
_REFERENCES = re.compile(r"\[?#\d+\]?|\[?@[\w-]+\]?")
# asked for one product's version ("Which FastAPI version …"), a line's version of another product ("Add support
# for Pydantic's 2.7 …", "Python 3.8") is not the one asked for
# ("upgrading Starlette to `0.15.0`": Starlette's too)
_OWNED_VERSION = re.compile(
    r"\b([A-Z][\w.-]*)(?:'s)?\s+(?:(?:v(?:ersion)?|to|from)\s*)?`?(?:[<>=~^]=?\s*)?\d+\.\d+(?:\.\d+)*\b`?"
)
_ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")  # an IP address, not a release
_NOT_PRODUCTS = frozenset({"version", "versions", "release", "since", "upgrade", "added", "removed", "require"})
_ASKED_OWNER = re.compile(
    r"\b(?i:which|what)\s+([A-Z][\w.-]*)\s+version\b|\bversion of\s+([A-Z][\w.-]*)"
    # "FastAPI 从哪个版本开始支持 Trio？", "哪个 FastAPI 版本 …"
    r"|(?:^|[\s，,])([A-Z][\w.-]*)\s*(?:的|从|在|于|是在|是从)?\s*(?:哪个|哪一个|什么)\s*版本|(?:哪个|哪一个|什么)\s*([A-Z][\w.-]*)\s*版本"
)


# a product the question names as the owner of a thing ("Starlette 的 WebSocketException", "Starlette's
# `WebSocketException`"): asked which release re-exported it, "Upgrade Starlette to `0.21.0`" moves to Starlette's
# own (a product's version as such - "FastAPI 0.99.0 and above" in "哪个版本改了 FastAPI 的 …" - may be the one asked)
_POSSESSOR = re.compile(r"\b([A-Z][\w.-]*)(?:'s\s|\s*的\s*)")
_MOVED_TO = re.compile(r"\b(?:to|from)\b|[<>=~^]")


def _foreign_versions(text: str, question: str) -> str:
    owner = _ASKED_OWNER.search(question)
    if owner is None:
        possessors = {name.lower() for name in _POSSESSOR.findall(question)}
        if not possessors:
            return text
        return _OWNED_VERSION.sub(
            lambda m: " " if m.group(1).lower() in possessors and _MOVED_TO.search(m.group()) else m.group(), text
        )
    # asked "In which FastAPI version was support for Python 3.7 dropped?", "require Python 3.8" is Python's
    asked = next(g for g in owner.groups() if g).lower()
    return _OWNED_VERSION.sub(lambda m: m.group() if _owned_by(m.group(1), asked) else " ", text)


def _owned_by(word: str, asked: str) -> bool:
    """Is a version written after `word` the asked product's? "In version 0.121.0" is nobody's: a sentence's
    first word is no product."""
    return word.lower() == asked or word.lower() in EN_STOPWORDS or word.lower() in _NOT_PRODUCTS


# a size asked ("最多允许多大的请求体", "how large is …"), not an extent ("有多大区别", "how big a difference"): a
# size is written in digits ("10 MB"), no line's "一个" (a, one) gives it
_SIZE_ASKED = (
    r"多大(?!程度|的?(?:区别|影响|作用|差别|差异|关系|意义|好处|帮助|变化|用处|优势))"
    r"|\bhow (?:large|big)\b(?! (?:an? )?(?:difference|impact|effect|role|deal|advantage|benefit)\b)"
)
_ASKS_SIZE = re.compile(_SIZE_ASKED, re.I)
# a month in a written date ("Jul 29, 2026")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
# what kind of answer a question asks for, and what a quoted line must then contain
ANSWER_TYPES = [
    (
        re.compile(
            r"\b(?:which|what) (?:[\w-]+ ){0,2}version\b|\bsince (?:which|what|when)\b|哪个版本|什么版本|版本号(?:是)?多少",
            re.I,
        ),
        re.compile(r"\b\d+\.\d+(?:\.\d+)?\b"),
    ),
    (
        re.compile(
            r"\bhow (?:many|much|long)\b|\b(?:maximum|minimum|max|min) (?:\w+ ){0,2}(?:number|size|length|value|limit)\b"
            r"|\bdefault (?:\w+ )?(?:number|size|length|limit|timeout)\b"  # a default value may be False or None
            r"|\bwhich port\b|多少|几个|几秒|多久|多长时间|(?:哪个|什么)端口"
            r"|\bin (?:bytes|kilobytes|megabytes|gigabytes|[KMGT]i?B)\b"  # "What chunk size in bytes …?"
            rf"|{_SIZE_ASKED}",
            re.I,
        ),
        _NUMBER,
    ),
    (
        # the noun heads the phrase: "which path is ..." asks for an address, "which path operation parameter" not
        re.compile(
            r"\b(?:which|what) (?:\w+ ){0,2}(?:url|address|endpoint|path|domain)s?\b"
            r"(?=\s*(?:[?,.]|$)|\s+(?:is|are|was|does|do|did|should|will|can|must|has|have|serves?|of|for|in|to|at)\b)"
            r"|哪个地址|什么地址|哪个网址|哪个域名|什么域名",
            re.I,
        ),
        # an IP address too, and a domain name ("someapp.example.com")
        re.compile(
            r"https?://|(?<![\w])/[\w.-]+|\b\d{1,3}(?:\.\d{1,3}){3}\b|\blocalhost\b"
            r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|tech|example)\b"
        ),
    ),
    (
        # "Which version removed X?" is not answered by "X is supported since 0.115.0": the line must tell of an end
        re.compile(
            rf"\b(?:which|what) (?:\w+ )?version\b.*\b{ENDED}|\b{ENDED}.*\b(?:in|since) (?:which|what) version\b"
            rf"|(?:哪个|什么)版本.*{ENDED_ZH}|{ENDED_ZH}.*(?:哪个|什么)版本",
            re.I,
        ),
        TELLS_AN_END,
    ),
    (
        # a status code is three digits ("418"), not its constant's name, nor "a new one" or "two" of anything
        re.compile(
            r"\b(?:which|what) (?:\w+ )?status codes?\b(?! (?:constant|name|variable))|(?:哪个|什么)(?:HTTP ?)?状态码",
            re.I,
        ),
        re.compile(r"(?<![\d.])[1-5]\d\d(?![\d.])"),
    ),
    # asked when a release came out ("When was FastAPI 0.141.0 released?"): a date, not a version ("## 0.141.0
    # (2026-07-29)" in a changelog)
    (
        re.compile(
            r"\bwhen (?:was|were|did|is|will)\b.*\b(?:released?|published|come out|came out|shipped)\b"
            # "On what date was …", "In what month and year …", not "What date format …"
            r"|\brelease date\b|\b(?:on|by|in) (?:what|which) (?:date|month)\b"
            r"|发布日期|(?:什么时候|何时|哪天|哪一天)(?:发布|发行|推出)",
            re.I,
        ),
        # "2026-07-29", "Jul 29, 2026", "23 May 2004", "February 1979" (a month's name capitalised)
        re.compile(
            rf"\b(?:19|20)\d\d-\d\d-\d\d\b|\b{_MONTH} \d{{1,2}},? (?:19|20)\d\d\b"
            rf"|\b\d{{1,2}} (?-i:{_MONTH}) (?:19|20)\d\d\b|\b(?-i:{_MONTH}) (?:19|20)\d\d\b"
            r"|(?:19|20)\d\d 年|(?:19|20)\d\d年",
            re.I,
        ),
    ),
    # asked which year ("In which year did Dilys Laye die?"): a line with a year, not the one the question gives
    (
        re.compile(r"\b(?:what|which) year\b|哪一?年|什么年份|(?:哪个|什么)年份", re.I),
        re.compile(r"(?<![\d.])(?:1[0-9]{3}|20[0-9]{2})(?!\d|\.\d)"),
    ),
]


YEAR = 6
STATUS = 4  # the status code's index in ANSWER_TYPES
VERSION = 0
DATE = 5
_DATE_SHAPE = ANSWER_TYPES[DATE][1]
VERSION_WORD_ZH = "版本"  # what "哪个版本" asks by: the type asked, not a word the answering line must say
TITLED = frozenset({VERSION, 3, DATE})  # what a section's heading may state for its lines: a release, its end, its date
# a release the question names ("Python 3.9", "0.141.0"): what it asks about, never the version it asks for
_NAMED_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*)(?![\w]|\.\d)")


@functools.lru_cache(maxsize=256)
def named_versions(question: str) -> frozenset[str]:
    """The releases the question writes ("Python 3.5", "FastAPI 0.141.0"): a line about another release (3.6)
    does not answer it, whatever else it shares with the question."""
    return frozenset(m.group(1) for m in _NAMED_VERSION.finditer(question))


def holds_version(text: str, version: str, question: str = "") -> bool:
    """`3.5` written as itself, not inside `3.50` or `13.5` (`3.5.2` is a 3.5); and when the question names its
    product ("FastAPI 1.0.0"), not as another product's ("Add support for Starlette 1.0.0+")."""
    named = re.search(rf"\b([A-Z][\w.-]*)\s+v?{re.escape(version)}(?!\d)", question)
    if named is not None:  # "drops support for Python 3.6 … (3.7 or above)" is about Python 3.6, not 3.7
        releases = re.findall(rf"\b{re.escape(named.group(1))}\s+v?(\d+\.\d+(?:\.\d+)*)", text, re.I)
        if releases and not any(r == version or r.startswith(f"{version}.") for r in releases):
            return False
    for m in re.finditer(rf"(?<![\d.])(?:([A-Z][\w.-]*)(?:'s)?\s+v?)?{re.escape(version)}(?!\d)", text):
        if named is None or m.group(1) is None or m.group(1).lower() == named.group(1).lower():
            return True
    return False


@functools.lru_cache(maxsize=256)
def _asked_codes(question: str) -> frozenset[str]:
    return frozenset(m.group() for m in ANSWER_TYPES[STATUS][1].finditer(question))


# 几 + measure word is "how many" or "several": beside another question word (哪些, 什么 …), before it or after it,
# it is "several" ("怎样避免在几个用户模型里重复声明同样的字段？" asks how)
_SEVERAL_ZH = re.compile(r"几个?(?:月|年|天|周|小时|分钟|秒|次|种|个)")
_OTHER_QUESTION_WORD_ZH = re.compile(r"哪些|哪个|哪种|哪里|哪儿|什么|谁|为什么|怎么|怎样|如何")


def asked_types(question: str) -> list[int]:
    """Which of the answer types (a version, a number, an address, an end, a status code, a date, a year) the
    question asks for: a line that answers it must state each."""
    asked = [i for i, (asks, _) in enumerate(ANSWER_TYPES) if asks.search(question)]
    if (
        1 in asked
        and _SEVERAL_ZH.search(question)
        and _OTHER_QUESTION_WORD_ZH.search(question)
        and not ANSWER_TYPES[1][0].search(_SEVERAL_ZH.sub("", question))
    ):
        asked.remove(1)  # "花了几个月研究哪些规范？" asks which specs: 几个月 is "several months"
    # "版本号是多少" asks a version as its number: the version is the number asked, not a number beside it
    return [i for i in asked if i != 1] if 0 in asked else asked


# asked how often ("多久计算一次？", "How often is … renewed?"): a frequency answers, in words or with a number
ASKS_FREQUENCY = re.compile(r"(?:多久|多长时间)[^，。？?]{0,8}?一次|每隔多久|\bhow often\b", re.I)
_TIME_UNITS = "second|minute|hour|day|week|month|year"
_TIME_UNITS_ZH = "秒|分钟|小时|天|日|周|星期|月|年"
_FREQUENCY = re.compile(
    rf"\b(?:each|every|per|once a|twice a|a) (?:\w+ )?(?:{_TIME_UNITS})s?\b"
    rf"|\b(?:hourly|daily|weekly|monthly|yearly|annually)\b|每(?:[一两三四五六七八九十\d]+)?(?:个)?(?:{_TIME_UNITS_ZH})",
    re.I,
)
# a rate asked ("How many … per week?", "每秒多少…"): the line must count in that unit, not just say a number
_RATE_EN = re.compile(rf"\b(?:per|a|each|every) ({_TIME_UNITS})\b", re.I)
# asked a count per some thing ("… per CPU core …"): the thing, its last word the head
_PER_THING = re.compile(
    r"\bhow many\b[^?]*?\bper ((?:[\w-]+ ){0,2}?[\w-]+)\s+(?:does|do|did|is|are|was|were|can|should|would|will)\b",
    re.I,
)
# a number of things in English: the number, at most two words, a plural ("hundreds of other contributors")
_COUNT_OF_THINGS = re.compile(
    r"(?:\b\d[\d,]*|\b(?:two|three|four|five|six|seven|eight|nine|ten|dozens|hundreds|thousands|millions))"
    r"\s+(?:of\s+)?(?:[\w-]+\s+){0,2}?[A-Za-z]{2,}s\b",
    re.I,
)
_RATE_ZH = re.compile(rf"每({_TIME_UNITS_ZH})")
_UNIT_ZH = {"日": "[日天]", "天": "[日天]", "周": "(?:周|星期)", "星期": "(?:周|星期)"}


# what "how many" counts: "How many worker threads does …" counts threads; "4 processes (4 workers)" counts none;
# "the maximum number of workers that …" counts workers: "one of the multiple replicated containers" counts none
_COUNTED = re.compile(
    r"\bhow many\s+(?:[\w-]+\s+){0,2}?([A-Za-z]+)\s+(?:does|do|did|is|are|was|were|can|could|should|would|will|must)\b"
    r"|\b(?:maximum|minimum|max|min) number of ([A-Za-z]+)\b",
    re.I,
)


@functools.lru_cache(maxsize=256)
def _counted(question: str) -> str | None:
    """The analysed thing a "how many" question counts, read once per question (every line is checked)."""
    counted = _COUNTED.search(question)
    noun = tokenize(counted.group(1) or counted.group(2)) if counted else []
    return noun[0] if noun else None


# "最多可以包含多少个标签？" counts 标签: a number in the line must count it ("3 个标签"), not "每个标签对应一个字典"
# (a measure word: "多少钱", "多少秒" ask an amount in a unit - "500 美元", "15 秒" - not things counted)
_COUNTED_ZH = re.compile(r"(?:多少|几)(?:个|条|种|项|次|位|台|份|件|名|张|行|列|页)(?=[\u4e00-\u9fff])")  # 多少行数据
_NUMERAL_ZH = r"(?:\d+|[一二两三四五六七八九十百千万]+|单(?=[个一]))"  # 单个 / 单一: "a single"
_EMPHASIS = re.compile(r"\*\*|__")  # Markdown bold, read past when a number counts a thing


@functools.lru_cache(maxsize=256)
def _counted_zh(question: str) -> str | None:
    """The word a Chinese "多少个 …" / "几个 …" counts (标签, 连接), read once per question: jieba's first word
    after it ("几个类型参数" counts 类型)."""
    counted = _COUNTED_ZH.search(question)
    words = cut_chinese(question[counted.end() :]) if counted else []
    return words[0] if words and has_cjk(words[0]) else None


# asked a quantity in a unit of size ("多少 GB", "how many MB", "in bytes"): a number in that unit answers, not any
# number
_ASKED_MEASURE = re.compile(
    r"(?:多少|几|\bhow (?:many|much)|\bin)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB|bytes|字节)(?![A-Za-z])", re.I
)


# asked how long until something happens ("崩溃后多久会被重启？"): a number of some time unit answers it, not "一个外部组件"
# ("默认缓存多少秒？" asks an amount of seconds: "第一步是…" states none)
_ASKS_DURATION = re.compile(
    r"多久|多长时间|(?:多少|几)(?:毫秒|秒|分钟|小时|天)|\bhow long\b(?=[^?]*\b(?:takes?|took|wait|after|before|until|lasts?)\b)"
    r"|\bhow many (?:milliseconds|seconds|minutes|hours|days)\b",
    re.I,
)
_DURATION = re.compile(
    rf"\d[\d,.]*\s*(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|hours?|h|days?|weeks?|months?)\b"
    rf"|{_NUMERAL_ZH}\s*(?:毫秒|秒|分钟|分|小时|天|日|周|星期|个月)",
    re.I,
)


# asked how long something stays as it is ("How long would the session be held?", not how long a step takes):
# an end it lasts until answers in words
_HOW_LONG_HELD = re.compile(r"\bhow long (?:is|are|was|were|would|will|does|do|can|should)\b(?![^?]*\btakes?\b)", re.I)
_UNTIL = re.compile(r"\buntil\b|\bas long as\b", re.I)


def _holds_until(question: str) -> bool:
    """Asked how long something stays as it is, not how long a step takes or waits."""
    return bool(_HOW_LONG_HELD.search(question)) and not _ASKS_DURATION.search(question)


# asked a bound ("最多可以包含多少个…", "What is the maximum number of …"): a line giving a count without saying it
# bounds anything ("此处仅包含一个作用域") tells how many one example has, not how many are allowed
_ASKS_BOUND = re.compile(
    r"最多|至多|最少|至少|上限|下限|\b(?:maximum|minimum|max|min)\b|\bat (?:most|least)\b|\bup to how many\b", re.I
)
# a bound said outright (最多, "at most", 只能, "only")
_BOUND_SAID_ZH = "最多|至多|最少|至少|上限|下限|不超过|不能超过|以内"
_BOUND_SAID_EN = (
    "maximum|minimum|max|min|limit(?:s|ed)?|at most|at least|up to|no more than|no fewer than|no less than|exceed"
)
_STRONG_BOUND = re.compile(rf"{_BOUND_SAID_ZH}|只能|仅能|\b(?:{_BOUND_SAID_EN}|only)\b", re.I)
# (what something can do is its bound too - "It can send 500 events per second" - unless the line tells of an example:
# "此处仅包含一个作用域（也可以包含更多）")
_BOUND = re.compile(rf"{_BOUND_SAID_ZH}|能|可以|\b(?:{_BOUND_SAID_EN}|can|could)\b", re.I)
# "一个", "一组", "one", "a": a thing said, not counted
_ARTICLE = re.compile(r"一(?=[个组种件条份套])|\bone\b", re.I)
_EXAMPLE_COUNT = re.compile(r"此处|这里|本例|示例中|例如|\b(?:here|in this example|for example)\b", re.I)


def _counts_in(question: str, text: str) -> bool:
    """Asked for a rate, the line says its unit ("week", "weekly", 每周); asked how many of a thing, the line
    names the thing (in Chinese, with a number just before it); asked how long, a number of a time unit; any
    line when none of these is asked."""
    if _ASKS_DURATION.search(question) and not _DURATION.search(text):
        return False
    if _ASKS_SIZE.search(question) and not re.search(r"\d", text):
        return False
    if _ASKS_BOUND.search(question):
        if not _BOUND.search(text) or _EXAMPLE_COUNT.search(text):
            return False
        if not _STRONG_BOUND.search(text) and not _NUMBER.search(_ARTICLE.sub(" ", text)):
            return False  # "你可以创建一个 Pydantic 模型来声明它们": "can" and "a" bound nothing ("只能有一个" does)
    noun = _counted(question)
    if noun and noun not in tokenize(text):
        return False
    # the number, a measure word, a name or a short modifier between ("同一个 WebSocket 连接", "两个非常豪华的汉堡"),
    # then the thing counted
    counted_zh = _counted_zh(question)
    between = r"(?:[A-Za-z][\w-]*\s*|[\u4e00-\u9fff]{1,6}的)?"
    # (an English line is read for a number of some things: "There are hundreds of other contributors", not "if you
    # have only one Pydantic model"; the bold of "一个**单个进程**" is no word between the number and the thing)
    if (
        counted_zh
        and has_cjk(text)
        and not re.search(rf"{_NUMERAL_ZH}\s*\S?\s*{between}{re.escape(counted_zh)}", _EMPHASIS.sub("", text))
    ):
        return False
    if counted_zh and not has_cjk(text) and not _COUNT_OF_THINGS.search(text):
        return False
    # "How many worker processes per CPU core …?": a count of processes in a server says nothing per core
    per = _PER_THING.search(question)
    head = tokenize(per.group(1))[-1:] if per and not _RATE_EN.search(question) else []
    if head and head[0] not in tokenize(text):
        return False
    if (measure := _ASKED_MEASURE.search(question)) and not re.search(
        rf"{_NUMERAL_ZH}\s*{re.escape(measure.group(1))}\b", text, re.I
    ):
        return False  # "多少 GB 内存？": "…由多个副本容器之一来处理" counts no gigabytes
    if unit := _RATE_EN.search(question):
        # "every 15 seconds" counts seconds, not events per second: a number of the unit itself is no rate
        rest = re.sub(rf"\b\d[\d,.]*\s*{unit.group(1)}s?\b", " ", text, flags=re.I)
        return bool(re.search(rf"\b{unit.group(1)}", text, re.I)) and bool(_NUMBER.search(rest))
    if unit := _RATE_ZH.search(question):
        return bool(re.search(_UNIT_ZH.get(unit.group(1), unit.group(1)), text))
    return True


def _without(shape: re.Pattern, given: Collection[str], text: str) -> str:
    """`text` with the matches of `shape` that are in `given` blanked out."""
    return shape.sub(lambda m: " " if m.group() in given else m.group(), text)


def states_each(types: list[int], text: str, question: str) -> bool:
    """Does the line state each answer type asked (`asked_types`)? Versions of another product than the one
    asked about, pull request numbers and link targets do not count; nor, asked for a number, a release, or,
    asked for a rate, a number in no such unit."""
    if not types:
        return True
    stated = _REFERENCES.sub("", _foreign_versions(LINK_TARGET.sub("", text), question))
    for i in types:
        shape = ANSWER_TYPES[i][1]
        # a date is no quantity: asked how many contributors, "As of July 2026, …" counts none
        said = _DATE_SHAPE.sub(" ", _VERSION.sub(" ", stated)) if shape is _NUMBER else stated
        if i == STATUS:  # "默认返回 200 的时候 … 哪个状态码？": the code the question gives is not the one it asks
            said = _without(shape, _asked_codes(question), said)
        if i == YEAR:  # "… the 1975 documentary …, in which year …?": not 1975
            said = _without(shape, set(shape.findall(question)), said)
        if i == VERSION:  # an address ("http://127.0.0.1:8000/app") is no release
            said = _ADDRESS.sub(" ", said)
        if i == VERSION and named_versions(question):  # "… support for Python 3.9 dropped?": not 3.9
            said = shape.sub(lambda m: " " if m.group() in named_versions(question) else m.group(), said)
        if shape is _NUMBER and ASKS_FREQUENCY.search(question) and _FREQUENCY.search(said):
            continue  # "多久计算一次？": "… calculated continuously, each month" tells how often, no number
        if shape is _NUMBER and _holds_until(question) and _UNTIL.search(said):
            continue  # "How long would the session be held?": "… held until the response is finished being sent"
        if not shape.search(said):
            return False
        if shape is _NUMBER and not _counts_in(question, stated):
            return False
    return True


def asks_default(question: str) -> bool:
    return bool(_ASKS_DEFAULT.search(_CONDITION_EN.sub(",", _CONDITION_ZH.sub("，", question))))


# "What is the default timeout for …?": the default of what - a line that never names a timeout gives another default
_DEFAULT_OF = re.compile(
    r"\b(?:what(?:'s| is| are| was)|which is) the default ([a-z][\w-]*)\s+(?:for|of|in|on|when|that|used)\b", re.I
)
_GENERIC_VALUES = frozenset(tokenize("value values setting settings option options behavior behaviour way one"))


def default_of(question: str) -> str | None:
    """The analysed thing whose default the question asks ("timeout"), None for a generic "value"."""
    match = _DEFAULT_OF.search(question)
    words = tokenize(match.group(1)) if match else []
    return words[0] if words and words[0] not in _GENERIC_VALUES else None


# "What is the maximum size of the content …?": a limit of what - a line giving a maximum time is no maximum size
_LIMIT_OF = re.compile(r"\b(?:maximum|minimum|max|min) (?:\w+ )?(size|length)\b", re.I)
_MEASURES = {
    # (`min_length=3`, `max_size`: the measure inside a parameter's name too)
    "size": re.compile(r"sizes?\b|\b(?:bytes?|[KMG]i?B|kilobytes?|megabytes?|gigabytes?)\b|大小", re.I),
    "length": re.compile(r"length\b|\bcharacters?\b|\bchars?\b|长度", re.I),
}


def limit_of(question: str) -> str | None:
    """The measure whose limit the question asks ("size", "length"), None when it asks none of these."""
    match = _LIMIT_OF.search(question)
    return match.group(1).lower() if match else None


def says_measure(text: str, measure: str) -> bool:
    return bool(_MEASURES[measure].search(text))


def says_default(text: str) -> bool:
    return bool(_DEFAULT.search(text))
