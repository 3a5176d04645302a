"""The question's key terms, and how fully a text holds each of them: what the extractive ranker, the coverage
rules and the refusals weigh. A term counts by its rarity in the knowledge base."""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Callable

from kb_agent.agent import answer_types
from kb_agent.agent.asked_shapes import ASKS_REQUIREMENT_ZH
from kb_agent.agent.evidence_units import TYPE_WORDS, Unit, terms
from kb_agent.agent.name_kinds import NAME_OF
from kb_agent.text.tokenize import FUNCTION_WORDS, QUESTION_WORDS, guessed_word, has_cjk, tokenize, zh_tag

# words that shape a question without saying what it is about
_FRAME = (
    "mean means meaning purpose must need needs should would could might way ways used go goes get gets make "
    "happen happens work works put one ones 意思 含义 用途 需要 应该 必须 "  # "a different one": a pronoun
    "many much "  # "how many", "how much": the question asks for a number, not about "many"
    "so from "  # "… so Pydantic can read …", "… from being included": a clause's glue
    "given "  # "when no query is given": a clause's verb, rare in docs and so weighed heavily
    "back among amongst own "  # "send back", "sent among the schemes …", "of their own": a particle, a preposition
    "up "  # "set up", "look up": a particle (a rare word in docs, it had covered "set up blue-green deployments")
    "hand hands handed "  # "when I hand it to Depends": a verb of passing, as "put" is
    "unlike besides except versus whereas instead rather apart aside other others another "  # relating the subject to another
    "thing things thingy stuff gizmo gadget knob doohickey 东西 "  # a placeholder for what the documents name
    # the Chinese question words jieba keeps whole: "多少" is in no answer
    "多少 几个 哪里 哪儿 是多少 是什么 什么样 每隔 "  # 每隔多少秒: "how often"
    "多长 多久 举例 "  # "how long"; "for example" ("文档举例说…")
    "一共 总共 共有 "  # "in all": 一共点了几个 asks a count, no line says "in all"
    "如果 假如 要是 的话 "  # "if": the condition's glue (English "if" is a stop word); "…的话" closes it
    "方面 "  # "哪些方面", "在性能方面": the aspect asked about frames the question, the line names the aspect
    "时候 还是 "  # "…的时候" / "什么时候" is English "when", "A 还是 B" its "or": a question's glue, in no answer
    "以后 之后 "  # "…以后" is English "after": a clause's glue
    "只是 办法 拿到 "  # "just", "way" and "get", as the English frame words above
    "相比 比起 "  # "A 和 B 相比": "compared with", as "unlike" and "versus" are
)
# "What is the difference between A and B?", "A 和 B 有什么区别？": the question's shape; a line contrasting the two
# ("In contrast to a container image …, a container …") answers without the words
ASKS_DIFFERENCE = re.compile(
    r"\bdifferences? between\b|\bhow (?:does|do|is|are) .+ differ\b|\bdiffers? from\b|有什么(?:区别|不同|差别|差异)"
    r"|(?:区别|差别|差异)(?:是什么|在哪)",
    re.I,
)
_DIFFERENCE_WORDS = frozenset(tokenize("difference differences differ between")) | {"区别", "不同", "差别", "差异"}
_DOCS_SAY = re.compile(r"(?:文档|文件)(?:里|中|上)?(?:举例)?(?:说|提到|写道|用的?是|推荐|建议)")
# "Which tool does the guide use …?", "according to the docs": the documents as the one who says, not a topic
_DOCS_SUBJECT = re.compile(
    r"\b(?:(?:does|do|did)\s+the|according\s+to\s+the|in\s+this)\s+(guide|docs|documentation|tutorial)\b", re.I
)
_ACCORDING = re.compile(r"\baccording to\b", re.I)
_GLUED_LOCATIVE = re.compile(r"^[中里内][\u4e00-\u9fff]$")
_GLUED_MODAL = re.compile(r"^[\u4e00-\u9fff][会能将要]$")
# "结束后会对文件做什么": a time or place word's last character glued to the modal after it (后会), whatever a
# dictionary tags it ("后会" is listed as a noun)
_TIME_OR_PLACE = "后前时中里内外上下"
# "Which two editors …?": how many answers are wanted, not a word the answer writes
_ANSWER_COUNT = re.compile(r"\b(?:which|what|the)\s+(two|three|four|five|six)\b", re.I)
# "… on the return-a-response-directly page": which page; its name is the passage's title or path, not a line's
_PAGE_POINTER = re.compile(
    r"\b(?:the|this)\s+(?:(?!(?:the|this|on|in|of)\b)[\w./-]+\s+){0,4}(?:page|tutorial|guide)\b", re.I
)
_PAGE_WORDS = frozenset(tokenize("page tutorial guide"))
_RESPONDS_WITH = re.compile(r"\b(?:respond|responds|reply|replies) with\b", re.I)
_RESPOND_WORDS = frozenset(tokenize("respond responds reply replies"))
_RESPONSE_WORDS = frozenset(tokenize("response"))


def page_named(question: str) -> set[str]:
    """The terms of the page a question points to ("the features page" -> features), which the passage's title
    or path holds for every line of it."""
    return {t for m in _PAGE_POINTER.finditer(question) for t in terms(m.group())} - _PAGE_WORDS - QUESTION_TERMS


_UNDER_NAME = re.compile(r"\b(?:under|by|with)\s+(?:which|what)\s+names?\b", re.I)
_UNDER_NAME_WORDS = frozenset(tokenize("under name names"))
_ASKS_DATE = re.compile(r"\b(?:on|in|by) (?:what|which) (?:date|day|month)\b|\b(?:what|which) year\b", re.I)
_DATE_WORDS = frozenset(tokenize("date day month year"))
_VIEWPOINT = re.compile(r"\bpoints? of view\b|\bstandpoint\b|\bviewpoint\b|角度来看|的角度", re.I)
_VIEWPOINT_WORDS = frozenset(tokenize("point points view standpoint viewpoint")) | {"角度"}
# "从哪个版本开始 …" / "starting from which version …": since when, the line need not say "start" ("no more versions
# will be released" under "## 0.129.2")
_SINCE = re.compile(
    r"从[^，。？?]{0,12}?(?:开始|起)|版本(?:开始|起)|\bstarting (?:from|with|in) (?:what|which)\b", re.I
)
_SINCE_WORDS = frozenset(tokenize("starting start")) | {"开始"}
# asked which release added something, the verb of adding frames it: a change log writes "Add support …", "✨ …",
# "New …" or nothing at all, and an English line says no Chinese verb
_ADDED_WORDS = frozenset({"加入", "添加", "引入", "新增", "增加"})
_RELEASE_ADDED = re.compile(rf"(?:哪个|哪一个|什么)版本[^，。？?]{{0,30}}?(?:{'|'.join(sorted(_ADDED_WORDS))})")
# "operation_id 需要满足什么条件？": the requirement is what is asked, a line states it without the words
_CONDITION_WORDS = frozenset({"满足", "符合", "条件", "要求"})
# "除了团队以外 …" (apart from the team): 以外 closes the frame 除了 opens, it names nothing
_APART = re.compile(r"除了?[^，。？?]{1,12}?(?:以外|之外)")
# a Chinese word whole too: jieba cuts it by context (哪种 alone -> 哪, 种) and keeps it in "在哪种版本"
_WORDS = [*QUESTION_WORDS, *FUNCTION_WORDS, *_FRAME.split()]
QUESTION_TERMS = frozenset(terms(" ".join(_WORDS)) | set(tokenize(" ".join(_WORDS)))) | frozenset(
    w for w in _WORDS if has_cjk(w)
)  # as `terms` reads a question ("given" is "give") and as the tokenizer does
# 哪 + a measure word (哪条, 哪种, 哪款 …) asks which: jieba keeps each whole, and no list could name them all
WHICH_ZH = "哪"
# "有没有 …" ("is there …") asks whether, as 是否 does; counted whole only - its piece 没有 ("not") says something
_WHETHER_ZH = "有没有"
# "还有什么工具能用？" ("what else …"): glue only before a question word - "如果你还有一个 …" ("also have") says something
_WHAT_ELSE_ZH = re.compile(r"还有(?=什么|哪|别的|其他|其它)")
# 几 + a measure word (几条, 几种, 几步 …) asks how many, as 几个 does: jieba keeps each whole ("需要几条命令" is
# answered by "一条命令"); 几乎 (almost) and 几何 are words of their own
_HOW_MANY_ZH = re.compile(r"^几[个条种次步项位台份件名张行列页处类层秒天周年]$")
_IDENTIFIER_WORD = re.compile(r"\b[A-Za-z_][\w]*(?:[_.-][\w]+)+\b|\b[A-Za-z]*[a-z][A-Z]\w*\b|\b[A-Z]{2,}[a-z]\w*\b")


# "What kind of server is Uvicorn?", "Uvicorn 是什么类型的服务器？": the kind frames the question; "Uvicorn is a
# lightning-fast ASGI server" answers it without the word
KIND_OF = re.compile(
    r"\b(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\b|(?:什么|哪种|哪一种|哪类|哪一类)(?:类型|种类)", re.I
)
_KIND_WORDS = frozenset(tokenize("kind kinds type types sort sorts 类型 种类"))


# a Chinese pronoun or numeral (各自 each, 一份 a copy, 多个 several, 这些 these) frames a question as "each",
# "several" do: "为什么多个 worker 进程会各自占用一份内存？" is answered by "多个进程通常不共享任何内存" without them
_FRAMING_TAGS = frozenset({"r", "m", "mq", "q"})


def _pointing_or_counting(term: str) -> bool:
    return has_cjk(term) and zh_tag(term) in _FRAMING_TAGS


_LIST_NOUN = re.compile(r"\b(?:the|a|an|this|that|which|what)\s+list\b", re.I)


def key_terms(question: str) -> set[str]:
    """The question's content words (what it asks about), without the words that only make it a question.
    An identifier counts once: `max_age`, not also `max` and `age`."""
    asked = {t for t in terms(question) - QUESTION_TERMS if not t.startswith(WHICH_ZH) and not _HOW_MANY_ZH.match(t)}
    if _WHAT_ELSE_ZH.search(question):
        asked.discard("还有")
    if _WHETHER_ZH in question:
        asked.discard(_WHETHER_ZH)
        if question.count("没有") == question.count(_WHETHER_ZH):
            asked.discard("没有")
    if KIND_OF.search(question):
        asked -= _KIND_WORDS
    if NAME_OF.search(question):  # "the name of the cookie": a name is what is asked, not what a line must say
        asked -= {"name"}
    if _UNDER_NAME.search(question):  # "under which name …": the line says "an object called `app`"
        asked -= _UNDER_NAME_WORDS
    if ASKS_DIFFERENCE.search(question):  # "the difference between an image and a container": the two things
        asked -= _DIFFERENCE_WORDS
    for count in _ANSWER_COUNT.finditer(question):
        asked -= set(tokenize(count.group(1)))
    if _RESPONDS_WITH.search(question):  # "What does the app respond with?": the pages write "the response"
        asked = (asked - _RESPOND_WORDS) | _RESPONSE_WORDS
    if _PAGE_POINTER.search(question):
        asked -= _PAGE_WORDS
    if _DOCS_SAY.search(question):  # "文档举例说…" (the docs say, for example): who says it, not what about
        asked -= {"文档"}
    for said_by in _DOCS_SUBJECT.finditer(question):
        asked -= set(tokenize(said_by.group(1)))
    if _ACCORDING.search(question):  # "according to the async page": who says it, no word the answer says
        asked -= {"accord"}
    # "On what date …", "In what month and year …", "Which year …": a date or year the line must state (answer
    # types), no word of it
    if _ASKS_DATE.search(question):
        asked -= _DATE_WORDS
    if _VIEWPOINT.search(question):  # "from a developer's point of view": the angle, said "perspective" by the page
        asked -= _VIEWPOINT_WORDS
    if _SINCE.search(question):
        asked -= _SINCE_WORDS
    if answer_types.ASKS_FREQUENCY.search(question):  # "多久计算一次": 一次 ("once") frames how often
        asked -= {"一次"}
    if ASKS_REQUIREMENT_ZH.search(question):
        asked -= _CONDITION_WORDS
    if _APART.search(question):
        asked -= {"以外", "之外"}
    if _RELEASE_ADDED.search(question):  # "在哪个版本加入了对 mypy --strict 的支持": the notes write "Add …", "✨ …"
        asked -= _ADDED_WORDS
    parts: set[str] = set()
    for word in _IDENTIFIER_WORD.findall(question):  # max_age, CORSMiddleware, python-multipart
        analysed = tokenize(word)
        parts |= set(analysed[1:]) - {analysed[0]} if analysed else set()
        # nor as the class name `terms` reads it as (`annotated_doc` as annotateddoc)
        parts |= {piece.replace("_", "") for piece in word.lower().split(".") if "_" in piece}
    # a part the question also writes as a word of its own stays: "Why stream … with StreamingResponse" asks of streaming
    asked -= parts - terms(_IDENTIFIER_WORD.sub(" ", question))
    # a type's abbreviation is asked as written: "a dict" does not also ask for "dictionary" (`terms` reads it so)
    asked -= {TYPE_WORDS[t] for t in asked & TYPE_WORDS.keys()} - set(tokenize(question))
    # "JSON Schema 中新的 …": the locative 中 after a name, glued by jieba to the next character (中新, a place)
    asked -= {t for t in asked if _GLUED_LOCATIVE.search(t) and zh_tag(t) in (None, "ns") and f" {t}" in question}
    # "请求头会以什么 …": a noun's last character glued to the modal after it (头会), a word no dictionary tags
    asked -= {t for t in asked if _GLUED_MODAL.search(t) and (t[0] in _TIME_OR_PLACE or zh_tag(t) is None)}
    asked |= {_SYMBOL_NAME[m.group(m.lastindex or 0)] for m in _LONE_SYMBOL.finditer(question)}  # "^": "caret"
    if _LIST_NOUN.search(question):  # "the list of all required scopes": a thing, not "List the …"
        asked |= {"list"}
    # jieba's search mode also yields the pieces of a word (分布式 -> 分布, 布式): one word counts once
    cjk = [t for t in asked if has_cjk(t)]
    kept = {t for t in asked if not any(t != longer and t in longer for longer in cjk) and not guessed_word(t)}
    return kept or asked


# a negated verb the question writes ("doesn't", analysed also as "doesn") is held by any negation a line writes
_NEGATED = re.compile(r"(?:do|does|did|is|are|was|were|has|have|had|ca|could|should|would|wo|must|need)n(?:'t)?")
_NEGATION = re.compile(r"\b(?:\w+n['’]t|not|never|cannot|no longer)\b", re.I)


# the docs' author writes in the first person: "the author decided to use …" is "I decided …", "我…研究"
_AUTHOR = frozenset({"author", "作者"})
_FIRST_PERSON = re.compile(r"\bI\b(?!/)|我(?!们)")


def term_credits(found: set[str], text: str, asked: set[str], short_forms: bool = False) -> dict[str, float]:
    """How fully `text` holds each asked term: a Chinese word however jieba split it here counts whole, only a
    piece of it (默认 for 默认值) half; a hyphenated word whole when the text writes its parts ("developer-induced"
    in "human (developer) induced errors"); two asked words the text writes as one ("plain text": "plaintext");
    with `short_forms`, a word's common short form ("app" for "application": `_ABBREVIATED`)."""
    credit: dict[str, float] = {}
    for t in asked:
        if (
            t in found
            or (short_forms and _ABBREVIATED.get(t, t) in found)
            or (has_cjk(t) and t in text)
            or _parts_held(t, found)
            or _resultative_held(t, text)
            or _regarded_held(t, text)
            or symbol_held(t, text)
            or (t in _AUTHOR and bool(_FIRST_PERSON.search(text)))
        ):
            credit[t] = 1.0
        elif has_cjk(t) and any(len(p) > 1 and p != t and p in text for p in tokenize(t)):
            credit[t] = 0.5
    # (only as a contraction the question writes: "won" alone is a verb, "Don" a name)
    negated = [
        t for t in asked if t not in credit and _NEGATED.fullmatch(t) and (t.endswith("'t") or f"{t}'t" in asked)
    ]
    if negated and _NEGATION.search(text):  # "Why doesn't FastAPI get confused?": "FastAPI won't get confused"
        credit.update(dict.fromkeys(negated, 0.5))  # half: the negation said as asked ("can't") is the closer
    missing = [t for t in asked if t not in credit and t.isascii() and t.isalpha()]
    if len(missing) > 1:
        lowered = text.lower()
        for a in missing:  # "plain text" held by "plaintext", "web socket" by "WebSocket": one word, two terms
            for b in missing:
                if a != b and re.search(rf"\b{a}{b}", lowered):
                    credit[a] = credit[b] = 1.0
    return credit


# a word and its common short form, as analysed: a question's "app" is the page's "application" (when judging
# whether a page holds the question at all; not when ranking lines: "sub-application" is no "main app")
_ABBREVIATED = {
    short: long
    for a, b in (("app", "application"), ("config", "configuration"), ("auth", "authentication"),
                 ("repo", "repository"), ("db", "database"), ("param", "parameter"), ("docs", "documentation"))
    for short, long in ((tokenize(a)[0], tokenize(b)[0]), (tokenize(b)[0], tokenize(a)[0]))
}  # fmt: skip


# a Chinese verb's result written with 成 or with 为 is one word: 转换成 / 转换为, 设置成 / 设置为, 变成 / 变为
_RESULTATIVE = ("成", "为")


def _resultative_held(term: str, text: str) -> bool:
    if len(term) < 3 or term[-1] not in _RESULTATIVE or not has_cjk(term):
        return False
    return any(f"{term[:-1]}{ending}" in text for ending in _RESULTATIVE)


# "regard as" in Chinese is one verb however written: "可以被看作什么" asks what "可以视为" says
_REGARDED = ("看作", "看成", "视为", "视作", "当作", "当成")


def _regarded_held(term: str, text: str) -> bool:
    return term in _REGARDED and any(word in text for word in _REGARDED)


# a symbol asked by its name ("the dot at the end of the command") is written as itself, in code: "Notice the `.`"
# (keyed by the analysed word: "ellipsis" is read "ellipsi")
_SYMBOLS = {
    "dot": ".",
    "period": ".",
    "点": ".",
    "slash": "/",
    "斜杠": "/",
    "backslash": "\\",
    "pipe": "|",
    "bar": "|",
    "asterisk": "*",
    "star": "*",
    "星号": "*",
    "colon": ":",
    "冒号": ":",
    "hash": "#",
    "semicolon": ";",
    "ellipsi": "...",
    "underscor": "_",
    "下划线": "_",
    "tild": "~",
    "caret": "^",
    "ampersand": "&",
    "dollar": "$",
}
# a symbol the question writes on its own ("示例里的 ^ 表示什么？"): asked by its name, held by a line that codes it;
# not an operator, which stands between names ("str | None", "a * b"), nor a prompt opening a command ("$ fastapi run")
# ("把 * 作为第一个参数": a star between Chinese words is no operator either)
_LONE_SYMBOL = re.compile(
    r"(?<=[\s`])([\^$])(?=\s|`|$)|(?<=`)(\*)(?=`)|(?<=[\u4e00-\u9fff]\s)(\*)(?=\s[\u4e00-\u9fff])"
)
_SYMBOL_NAME = {"^": "caret", "$": "dollar", "*": "asterisk"}


def symbol_held(term: str, text: str) -> bool:
    symbol = _SYMBOLS.get(term)
    return symbol is not None and f"`{symbol}`" in text


def _parts_held(term: str, found: set[str]) -> bool:
    if term.isalpha() and term.isascii() and len(term) > 4:  # "WebSockets" whole, written "Websockets": websocket
        stem = _stemmed(term)
        if stem != term and stem in found:
            return True
    parts = _hyphen_parts(term) if "-" in term else ()
    return len(parts) > 1 and set(parts) <= found


@functools.lru_cache(maxsize=1024)
def _stemmed(term: str) -> str:
    analysed = tokenize(term)
    return analysed[0] if len(analysed) == 1 else term


@functools.lru_cache(maxsize=1024)
def _hyphen_parts(term: str) -> tuple[str, ...]:
    """A hyphenated term's parts, analysed once: `term_credits` asks for them for every line it reads."""
    return tuple(tokenize(term.replace("-", " ")))


def comparable_terms(asked: set[str], question_zh: bool, text_zh: bool) -> set[str]:
    """The asked terms a text could hold: all of them in the question's language, else only those written in
    the text's script (identifiers and numbers, for a Chinese question over English lines)."""
    return asked if text_zh == question_zh else {t for t in asked if has_cjk(t) == text_zh}


Weights = Callable[[set[str]], dict[str, float]]  # term -> weight (rarity in the knowledge base)
# a name written in a quarter or more of the knowledge base's passages names its subject ("FastAPI" in the
# FastAPI docs), never the class or module asked for (an IDF of log(1 + 4), as the engine's term weights count)
SUBJECT_NAME = math.log(1 + 4)


def subject_names(names: set[str], weights: Weights | None) -> set[str]:
    """Of `names`, the one-word ones the knowledge base writes nearly everywhere: its subject ("FastAPI" in its
    docs), read in one call to the weights. A name of more words is never the subject: `fastapi run` is a
    command, however common its first word is."""
    if weights is None:
        return set()
    parts = {name: set(tokenize(name)[:1]) for name in names if re.fullmatch(r"\w+", name)}
    try:
        rarity = weights(set().union(*parts.values())) if parts else {}
    except Exception:  # statistics are a refinement: without them no name is the subject
        return set()
    return {name for name, ts in parts.items() if ts and all(rarity.get(t, math.inf) <= SUBJECT_NAME for t in ts)}


def is_subject_name(name: str, weights: Weights | None) -> bool:
    """One word the knowledge base writes nearly everywhere: its subject ("FastAPI" in its docs)."""
    return name in subject_names({name}, weights)


_DETERMINER = r"(?:the|a|an|this|that|these|those|its|their|your|my|our|it|i|you|we|they|he|she)"
_AFTER_VERB = r"(?:the|a|an|its|it|them|in|on|at|to|for|with|by|from|into|of|when|if|after|before|while)"
# "Which error type does the response report when …": the word after do-support's subject, where an object,
# a preposition or the end follows (a subject of up to three words: "does a refresh token last in …")
_DO_VERB = re.compile(
    rf"\b(?:do|does|did)\s+(?:{_DETERMINER}\s+)?(?:[\w'-]+\s+){{0,3}}?([a-z]+)\b(?=\s+{_AFTER_VERB}\b|\s*[?,.;]|\s*$)",
    re.I,
)
# "… when it rejects a token", "… when an int path parameter receives the value": a condition clause's verb
_CLAUSE_VERB = re.compile(
    rf"\b(?:when|whenever|if|once|unless|after|before|while)\s+(?:{_DETERMINER}\s+)?(?:[\w-]+\s+){{0,3}}?"
    r"([a-z]+(?:s|ed))\b",
    re.I,
)


# "Which …" / "In which …" / "What …" asks for a thing: its verb relates the thing to the rest; "How do I register
# …?" asks for the doing itself
_ASKS_A_THING = re.compile(r"^\s*(?:(?:in|at|on|for|from|to|with|by|of)\s+)?(?:which|what)\b", re.I)


def clause_verbs(question: str) -> set[str]:
    """The analysed verbs the question's own wording carries (English only): the main verb after do-support in a
    question asking for a thing, and a condition clause's verb."""
    patterns = (_DO_VERB, _CLAUSE_VERB) if _ASKS_A_THING.match(question) else (_CLAUSE_VERB,)
    found = [m.group(1) for pattern in patterns for m in pattern.finditer(question)]
    return {t for word in found for t in tokenize(word)}


def paraphrase_capped(weight: dict[str, float], contexts: list[dict[str, float]], question: str) -> dict[str, float]:
    """A verb of the question's own wording ("when it rejects a token", "does the response report") that no
    passage found holds, not even in its title or path, counts no more than the commonest term some passage
    holds: rare as it is, the documents say the same in other words. Only a verb: an unheld noun ("a refresh
    token") is a thing the documents do not speak of."""
    held = {t for c in contexts for t, v in c.items() if v}
    present = [w for t, w in weight.items() if t in held]
    unheld = clause_verbs(question) & weight.keys() - held
    if not present or not unheld:
        return weight
    floor = min(present)
    return {t: min(w, floor) if t in unheld else w for t, w in weight.items()}


# "Which OAuth2 flow is the most secure?", "OAuth2 的哪种流程最安全？": the line that writes the same superlative
# ("The most secure is the code flow", "最安全的是代码流") names what the question picks out
# ("most of the code", "most likely" are no superlatives)
_SUPERLATIVE = re.compile(r"\b(?:most|least)\s+(?!(?:of|likely|probably)\b)[a-z][\w-]*|最[\u4e00-\u9fff]", re.I)
_NOT_SUPERLATIVE = ("最多", "最少", "最后", "最终", "最近", "最新", "最初", "最好")  # a count, a time, advice


def superlatives(question: str) -> list[str]:
    """The superlative phrases the question asks by, lower-cased ("most secure"; in Chinese 最 and the word's first
    character: "最常用" is asked of "`POST`（最常见）")."""
    found = (m.group(0).lower() for m in _SUPERLATIVE.finditer(question))
    return [p for p in found if not p.startswith(_NOT_SUPERLATIVE)]


def says_superlative(text: str, phrases: list[str]) -> bool:
    lowered = text.lower()
    return any(p in lowered for p in phrases)


def rarity(asked: set[str], units: list[Unit], weights: Weights | None) -> dict[str, float]:
    """How much each key term counts: its rarity in the knowledge base (BM25's document frequencies), else
    among the evidence units. "fastapi" in the FastAPI docs counts little, "worker" a lot."""
    found: dict[str, float] | None = None
    if weights is not None:
        with contextlib.suppress(Exception):  # statistics are a refinement; the evidence's own counts serve without
            found = {t: max(0.0, w) for t, w in weights(asked).items()}
    if found is None:
        count = len(units) or 1
        found = {t: math.log(1 + count / (1 + sum(1 for u in units if t in u.terms))) for t in asked}
    return _framing_capped(found)


# "Besides the OpenAPI schemes, which …", "… validate besides JSON objects, arrays and numbers?", "除了 401 还…":
# what the answer is not. Opening the question it ends at the comma; after its question word, at the end
_BESIDES = re.compile(
    r"^\s*(?:besides|apart from|aside from|other than|in addition to)\s+([^,，?？]+)"
    r"|\b(?:besides|apart from|aside from|other than|in addition to)\s+([^?？]+)"
    r"|除了([^，,？?还也]+?)(?:之外|以外)?(?=[，,还也])",
    re.I,
)


def excluded_capped(weight: dict[str, float], question: str) -> dict[str, float]:
    """The terms of what a question sets aside ("besides JSON objects, arrays, strings and numbers") count no
    more than its commonest other term: a line restating them ("JSON array (`list`) defining item types") is
    what was excluded, not the answer ("Validation for more exotic types, like: URL, Email, UUID")."""
    phrases = [next(g for g in m.groups() if g) for m in _BESIDES.finditer(question)]
    if not phrases:
        return weight
    excluded = {t for p in phrases for t in terms(p)} - terms(_BESIDES.sub(" ", question))
    return _capped(weight, excluded)


def _framing_capped(weight: dict[str, float]) -> dict[str, float]:
    """A framing word (`_pointing_or_counting`) counts no more than the question's commonest content word:
    rare as 各自 is, it says nothing the answer must ("多个进程通常不共享任何内存" answers "…各自占用一份内存").
    Kept, not dropped: "每个操作的 operation_id …" is answered by the line that says 每个操作."""
    framing = {t for t in weight if _pointing_or_counting(t) or t in _AUTHOR}  # the author: the narrator, "I"
    return _capped(weight, framing)


def _capped(weight: dict[str, float], capped: set[str]) -> dict[str, float]:
    """`weight` with the terms of `capped` counting no more than the lightest of the others."""
    others = [w for t, w in weight.items() if t not in capped]
    if not capped or not others:
        return weight
    floor = min(others)
    return {t: min(w, floor) if t in capped else w for t, w in weight.items()}
