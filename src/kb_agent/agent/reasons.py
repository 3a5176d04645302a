"""Why-questions. The sentence that matches one best usually restates what it asks about ("By default, that
would mean you can only have one HTTPS certificate per IP address"); the reason is the sentence beside it, tied
to it by a pointing word: the next one goes on "This default behavior provides protection against …", or this
one began "In that case …" / "that would mean …" after the reason."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type only
    from kb_agent.agent.evidence_units import Unit

_WHY = re.compile(r"^\s*why\b|为什么|为何", re.I)
# a sentence that gives its reason itself needs none beside it
# the gain a line names as what something does: "Using it in your editor is what really shows you the benefits"
_SHOWS_GAIN = re.compile(r"\bis what (?:really )?(?:shows|gives|brings|makes)\b|真正地?(?:展现|体现)", re.I)
# the use a line names is the reason to want it: "Probably the main use case for this is if you already have …"
_NAMES_USE = re.compile(
    r"\b(?:use[- ]cases?|reasons?) for (?:this|that|it|doing (?:this|that|so))\b|\bthe (?:main |only )?reason (?:is|being)\b"
    r"|(?:主要|最常见)的?(?:用例|用途|情形|场景|原因)是",
    re.I,
)
_CAUSE = re.compile(
    r"\b(?:because|since|now that|so that|in order to|to avoid|to prevent|otherwise|due to|that's why|this is why|this way)\b"
    # what a way guarantees is why to take it: "… a simpler way to do it that makes sure that the internal
    # middlewares handle server errors …"
    r"|\b(?:that|which) (?:makes? sure|ensures?) that\b"
    # "… use the exec form to ensure that FastAPI can shutdown gracefully", "By using a `with` block, we make sure
    # that the file-like object is closed": a purpose; not an order's "Make sure that you have …", nor what one
    # has to do ("you will have to make sure that it's a single process …")
    r"|(?<!\bhave )(?<!\bhas )(?<!\bhad )(?<!\bneed )(?<!\bneeds )(?<!\bwant )(?<!\bgoing )\bto (?:ensure|make sure) that\b"
    r"|\b(?:we|you|it|this) (?:make|makes) sure that\b"
    # the gain a trailing clause names is its reason: "… as you read it, without having to read it all into
    # memory at once"; not a way's "We can declare all that without having to modify …"
    r"|,\s*without (?:having|needing) to\b"
    # "It was no longer an API web framework, as the creator needed to focus on Starlette": "as" giving a cause,
    # not a time ("as you read it")
    # ("as the **application server** doesn't know it is behind a trusted **proxy**": a subject of a few words, a verb
    # negated)
    r"|(?:,\s*|^|\band\s+)as (?:the|it|they|its|their|this|that)\b(?:\s+[\w*]+){0,3}?\s+"
    r"(?:needed|needs|had|has|have|was|is|were|are|requires?|required|did|does|could|can"
    r"|doesn't|does not|don't|didn't|isn't|wasn't|can't|cannot|won't)(?!\w)"
    r"|" + _NAMES_USE.pattern + r"|" + _SHOWS_GAIN.pattern + r"|因为|由于|为了|以免|否则|以防|[，,]\s*(?:无需|不必)",
    re.I,
)
_POINTS_BACK = re.compile(
    r"^(?:this|that|these|those|it|such|so|therefore|thus|hence)\b|^(?:这|那|因此|所以|于是)", re.I
)
_FOLLOWS_FROM = re.compile(
    r"^(?:in that case|so|therefore|thus|hence)\b|\b(?:that|this) (?:would |will )?means?\b|^(?:因此|所以|这意味着|这样)",
    re.I,
)


# a line that says it gives the reason for what comes before it, a few lines (an example) further down
_GIVES_CAUSE = re.compile(
    r"^(?:this|that) is (?:because|why)\b|^that's (?:because|why)\b|^(?:这是因为|这是由于|原因是)", re.I
)
REASON_REACH = 4  # units after the line where its explicit reason may be


# a section titled as a reason ("Why use password hashing", "为什么使用…")
_WHY_HEADING = re.compile(r"(?:^|\s)Why\s|为什么|为何")


# "What is the risk of using the same model for input and output?" asks what could go wrong: the line that says
# so ("we could be sending our user's passwords to every client"), not the ones that restate the setup
_RISK = re.compile(
    r"\b(?:risks?|dangers?|downsides?|drawbacks?|pitfalls?|problems?|disadvantages?)\b(?: \w+){0,2} (?:of|with|in|if|when)\b"
    r"|\bwhat (?:could|can|might) go wrong\b|(?:风险|危险|坏处|缺点|弊端)",
    re.I,
)
_STATES_RISK = re.compile(
    r"\b(?:could|might|would|may) (?:be|end up|cause|leak|expose|break|lose|overwrite)\b(?! (?:fine|ok|okay|safe)\b)"
    r"|\brisk|\bdanger|\bproblem|\binsecure|\bleak|\bexpos|\bvulnerab|⚠️"
    r"|风险|危险|泄露|泄漏|可能会",
    re.I,
)

_NEGATED = re.compile(r"\b(?:not|no|never)\b|n't\b|不|没")


# "What is the benefit of storing the schema in `.openapi_schema`?" asks a reason as why-questions do: the line
# that matches restates the setup ("You can use … as a cache"), the next one says what it gains ("That way, …")
_BENEFIT = re.compile(
    r"\b(?:benefits?|advantages?|gains?|point|purpose)\b(?: \w+){0,2} (?:of|in|to|for)\b|\bwhat (?:for|good)\b"
    r"|好处|优点|优势|用处|有什么用|目的",
    re.I,
)


# "It used `uvloop` instead of the default Python `asyncio` loop. That's what made it so fast."
_MADE_IT = re.compile(r"\b(?:that|this|which)(?:'s| is| was) what (?:makes?|made)\b", re.I)
# when a thing is of use is why one would do it: "Self-hosting the JavaScript and CSS could be useful if, for example,
# you need your app to keep working even while offline", "如果你需要在离线…时…，那么自托管 … 会很有用"
_USEFUL_WHEN = re.compile(
    r"\b(?:is|are|be|becomes?)\s+(?:\w+\s+){0,2}?useful\s+(?:if|when|for|in case)\b|如果[^。！？]{0,80}?有用", re.I
)


def gives_cause(text: str) -> bool:
    """The line states a reason itself ("… so that your editor doesn't mark errors", "因为 …", "That's what
    made it so fast")."""
    return bool(_CAUSE.search(text) or _MADE_IT.search(text) or _USEFUL_WHEN.search(text))


# "This way the application would be able to know … its own public URL" gives the way before it as its cause: what
# it states is what that way gains, and the reason that is useful may be the line after ("This would be useful …
# to properly handle redirects")
_OPENS_THIS_WAY = re.compile(r"^\s*(?:in )?(?:this|that) way\b,?\s*", re.I)


def states_own_cause(text: str) -> bool:
    """The line gives a reason for what it says itself; an opening "This way, …" gives one for the line before."""
    return gives_cause(_OPENS_THIS_WAY.sub("", text, count=1))


def asks_why(question: str) -> bool:
    return bool(_WHY.search(question))


# "Why should you re-raise …?" asks the reason for advice: the line giving the advice again ("you should re-raise the
# original exception") is the question's claim, and what goes wrong without it ("If you … don't raise it again, FastAPI
# won't be able to notice …") the reason
_ADVICE_ASKED = re.compile(r"\bwhy (?:should|must|do|would) (?:i|you|we|one)\s+(?:always\s+)?([a-z][\w-]*)", re.I)
_WITHOUT_IT = re.compile(
    r"\bif\b[^.]*?\b(?:don't|do not|doesn't|does not|didn't|not|never|forget)\b[^.]*?"
    r"\b(?:won't|will not|can't|cannot|wouldn't|would not|will never|no)\b",
    re.I,
)


def advice_asked(question: str) -> str | None:
    """The verb of the advice a "Why should you …?" question asks the reason for ("re-raise")."""
    match = _ADVICE_ASKED.search(question)
    return match.group(1).lower() if match else None


def repeats_advice(text: str, verb: str) -> bool:
    """The line gives the advice again ("you should re-raise the original exception") and no reason for it."""
    said = re.search(rf"\b(?:should|must|need to|have to|always)\b(?:\W+\w+){{0,2}}?\W+{re.escape(verb)}", text, re.I)
    return bool(said) and not gives_cause(text)


def tells_what_goes_wrong(text: str) -> bool:
    """The line says what happens without the advice: "If you … don't raise it again, FastAPI won't …"."""
    return bool(_WITHOUT_IT.search(text))


# "What happens if a client sends extra form fields?" asks what follows: the line saying so under its condition
# ("如果客户端尝试发送一些额外的数据，他们将收到**错误**响应"), not the ones restating the setup
_CONSEQUENCE = re.compile(
    r"\bwhat (?:happens|will happen|would happen|happened)\b|会怎样|会怎么样|会发生什么|会如何|结果会|会?被(?:怎样|怎么|如何)处理",
    re.I,
)
_CONDITION = re.compile(r"\b(?:if|when|once|unless)\b|如果|假如|若|当|一旦", re.I)
_RESULT = re.compile(r"\b(?:will|would|then|gets?|receives?)\b|将|会|就|便|则", re.I)


def asks_consequence(question: str) -> bool:
    return bool(_CONSEQUENCE.search(question))


# "Keep in mind that this means that the whole contents will be stored in memory": what follows from the line
# before, said as its consequence
_MEANS_THAT = re.compile(r"\b(?:this|that) (?:also )?means (?:that )?\w+.*\b(?:will|would)\b|这意味着|这表示", re.I)
# "… how to reuse the same object, so that all the background tasks are merged together": what comes of it
_SO_THAT = re.compile(r"\bso that\b[^.]*\b(?:are|is|will|would|get|gets)\b|因此[^。]*(?:被|会|将)", re.I)


def states_consequence(text: str) -> bool:
    """The line says what follows under a condition ("If …, they will receive an error") or from what the line
    before says ("this means that … will be stored in memory"), or what comes of it ("so that … are merged")."""
    return (
        bool(_CONDITION.search(text) and _RESULT.search(text))
        or bool(_MEANS_THAT.search(text))
        or bool(_SO_THAT.search(text))
    )


def asks_benefit(question: str) -> bool:
    return bool(_BENEFIT.search(question))


def asks_risk(question: str) -> bool:
    return bool(_RISK.search(question))


def states_risk(text: str) -> bool:
    """The line tells what could go wrong, not that nothing would ("it might not be a problem")."""
    return any(not _NEGATED.search(text[max(0, m.start() - 16) : m.start()]) for m in _STATES_RISK.finditer(text))


def under_why_heading(unit: Unit) -> bool:
    """The unit sits in a section whose title asks why: its lines are the reason the page gives."""
    return bool(unit.heading and _WHY_HEADING.search(unit.heading))


def reason_beside(unit: Unit, units: list[Unit]) -> Unit | None:
    """The unit beside `unit` (its passage's units, in order) that gives its reason, if a pointing word ties
    them; None when `unit` states its reason itself or nothing ties a neighbour to it."""
    if states_own_cause(unit.text):
        return None
    at = unit.position
    after = units[at + 1] if at + 1 < len(units) else None
    if after is not None and _POINTS_BACK.match(after.text) and not _introduces(after):
        return after
    if after is not None and after.heading == unit.heading and _SHOWS_GAIN.search(after.text):
        return after  # "It is HIGHLY encouraged that you … run it locally." / "Using it … is what really shows you …"
    if at > 0 and _FOLLOWS_FROM.search(unit.text) and not _introduces(units[at - 1]):
        return units[at - 1]
    # "This is because OAuth2 uses form data …" past the command the line before it introduced
    for later in units[at + 1 : at + 1 + REASON_REACH]:
        if later.heading != unit.heading:
            break
        if _GIVES_CAUSE.match(later.text):
            return later
    return None


# "The string will be checked to be a valid URL …" after "… declare it to be Pydantic's `HttpUrl` …:" and its example:
# what the line before sets up comes to, said of what it set up
_OPENS_RESULT = re.compile(
    r"^(?:the|this|that|these|those|it|they)\b[^.]{0,80}?\b(?:will|would)\b|^(?:该|这|此|它)[^。]{0,40}?(?:将|会)", re.I
)
_PROSE = re.compile(r"[.。:：]\s*$")


def result_after(unit: Unit, units: list[Unit]) -> Unit | None:
    """Asked what happens, the line after `unit` (past its example, in its section) that says what comes of what
    `unit` sets up ("… declare it to be `HttpUrl` instead of a `str`:" / "The string will be checked to be a valid
    URL"); None when the next line of prose says something else."""
    for later in units[unit.position + 1 : unit.position + 1 + REASON_REACH]:
        if later.heading != unit.heading:
            break
        if _OPENS_RESULT.match(later.text):
            return later
        if _PROSE.search(later.text) and not later.note:
            break
    return None


# the subject a line opens with, when it is a pronoun: "But …" / "But …" is no subject carried on
_FIRST_WORD = re.compile(r"^\s*(it|they|this|these|you|we)\b", re.I)


def contrast_after(unit: Unit, units: list[Unit]) -> Unit | None:
    """The next line of `unit`'s section when `unit` says what something is not and that line goes on with the
    same subject saying what it is: "It doesn't return a large `str` …" / "It returns a Python standard data
    structure (e.g. a `dict`) …". None otherwise."""
    at = unit.position
    after = units[at + 1] if at + 1 < len(units) else None
    if after is None or after.heading != unit.heading or after.note or not _NEGATED.search(unit.text):
        return None
    own, next_ = _FIRST_WORD.match(unit.text), _FIRST_WORD.match(after.text)
    if own is None or next_ is None or own.group(1).lower() != next_.group(1).lower() or _NEGATED.search(after.text):
        return None
    return after


# a line opening with these means half of what it says with the line before it ("That tells the browser to show
# the prompt" - which header does?; "If you do this, … a unique name" - do what?); "it" is left out: it names
# the section's subject more often than the line's
_REFERS_BACK = re.compile(
    r"^(?:that|this|these|those|such)\b(?!\s*(?:is|are)\s+(?:how|where|what|when|why|a|an|the)\b)"
    r"|^in (?:that|this|such a) case\b|^(?:for|to do|to use) (?:that|this)\b|^if (?:you do (?:this|that)|so)\b|^(?:这|那|此|为此)"
    # a plural pronoun opening a line names the things of the line before: "They take a `set` of `str` …" after
    # "… the parameters `response_model_include` and `response_model_exclude`."
    r"|^they\b|^它们"
    # a consequence of the line before: "Because of that, versions of FastAPI previous to 0.99.0 still used …"
    r"|^(?:because of|due to) (?:that|this)\b|^as a result\b|^for (?:that|this) reason\b|^(?:因此|正因如此|由于这个原因)"
    # a reason written as a sentence of its own: "Because we can trust it …, as we control it." (why the line
    # before holds)
    r"|^because\b(?!\s+of\b)|^因为"
    r"|^该(?![如怎])",  # "该工具会帮助你…" (this tool); not "该如何" (how should)
    re.I,
)


# "当然，这并不是最优的做法": an aside before the pointing word ("of course", "obviously")
_ASIDE_FIRST = re.compile(r"^(?:当然|显然|诚然|(?:of course|obviously|clearly|naturally),)[，,]?\s*", re.I)


def refers_back(text: str) -> bool:
    """The line opens by pointing back to the one before it ("That tells …", "If you do this, …")."""
    return bool(_REFERS_BACK.match(_ASIDE_FIRST.sub("", text, count=1)))


# "For example, if you need to store it in a database." illustrates the line before it; a "For that, …" after it
# refers past the example to the statement it illustrates
_ILLUSTRATES = re.compile(r"^(?:for example|for instance|e\.g\.|like\b|例如|比如|举个例子)", re.I)  # "Like `x(…)`."


# "It won't be serialized with a model, etc." after "When you return a `Response` directly, … it will be returned
# directly.": under a heading, a line opening with "it" (它) speaks of what the line before it does; not the "it" of
# "It's possible to …", "It doesn't matter …" (an encyclopedia's record without headings: `passage_subject`)
_IT_REFERS = re.compile(
    r"^it\b(?!(?:'s|\s+is|\s+was|\s+would be|\s+will be|\s+might be|\s+can be|\s+could be|\s+may be)\s+(?:\w+\s+)?"
    r"(?:possible|impossible|important|recommended|advised|advisable|common|better|best|easy|easier|hard|harder|"
    r"difficult|useful|necessary|likely|unlikely|good|worth|enough|time|true|fine|safe|okay|ok|simple|convenient|"
    r"preferable|up to)\b|\s+(?:doesn't|does not|didn't|did not) matter\b|\s+(?:seems|turns out|depends|happens|"
    r"looks like)\b)|^它(?!们)",
    re.I,
)


def opens_with_it(unit: Unit) -> bool:
    """Does the line, under a heading, open with an "it" (它) that speaks of what the line before it does?"""
    return bool(unit.heading) and bool(_IT_REFERS.match(unit.text))


_PROSE = re.compile(r"(?:[A-Za-z]{2,}\W+){2,}[A-Za-z]{2,}|[\u4e00-\u9fff]{4}")  # a line of words, not an example's


def named_by_it(unit: Unit, units: list[Unit], reach: int = 4) -> Unit | None:
    """The line an "It …" line's "it" names: back past the "It …" lines before it ("Hug was one of the first
    frameworks …" / "It also was …" / "It was not based on a standard …" / "It has an interesting, uncommon feature"),
    the first that does not open with it, within `reach` lines. None for a line not opening with it."""
    if unit.position == 0 or not opens_with_it(unit):
        return None
    current = unit
    for _ in range(reach):
        before = _line_before(current, units)
        if before is None:
            return None
        if _PROSE.search(before.text) and not opens_with_it(before):
            return before
        current = before  # past an "It …" line, or an example's line (a JWT's code is no name)
    return None


def antecedent(unit: Unit, units: list[Unit]) -> Unit | None:
    """The line a pointing opening refers to: the text line before `unit` in its section (or, when that one is
    an example, the line it illustrates), unless it only introduces an example. None when `unit` does not open
    by pointing back ("It …" lines: `named_by_it`)."""
    if unit.position == 0 or not refers_back(unit.text):
        return None
    before = _line_before(unit, units)
    if before is not None and _ILLUSTRATES.match(before.text):
        illustrated = _line_before(before, units)
        if illustrated is not None and not refers_back(illustrated.text):
            return illustrated
    return before


# "It was released on 23 May 2004 …" in a paragraph that opens by saying what its subject is ("F.I.R. is …'s
# debut Mandarin studio album."): the pronoun is that subject, and the opening line says what it is
_SUBJECT_PRONOUN = re.compile(r"^(?:it|he|she|they|his|her|its|their)\b", re.I)
_DEFINES_SUBJECT = re.compile(r"^[\"'(]?[A-Z0-9][^!?]{0,160}?\s(?:is|was|are|were)\s")


def passage_subject(unit: Unit, units: list[Unit]) -> Unit | None:
    """The line opening a paragraph without a heading (an encyclopedia's record) when it defines a subject and
    the unit opens with a pronoun."""
    if unit.position <= 0 or unit.heading or not _SUBJECT_PRONOUN.match(unit.text):
        return None  # under a heading, the heading names the section's subject: its lines are read with it
    first = next((u for u in units if u.position >= 0 and u.heading == unit.heading), None)
    if first is None or first.position >= unit.position or not _DEFINES_SUBJECT.match(first.text):
        return None
    return first


# "I make the final decisions on the project" says who only beside "I, [@tiangolo](…), am the creator and owner …"
_FIRST_PERSON = re.compile(r"^I\b(?!\.)")
_NAMES_SPEAKER = re.compile(r"^I,\s+[^,]{1,80},\s+am\b|^(?:I am|I'm|My name is)\s+(?:\[?@|[A-Z])")


def speaker(unit: Unit, units: list[Unit]) -> Unit | None:
    """The line before `unit` in its section that says who its "I" is, when `unit` speaks as "I"."""
    if not _FIRST_PERSON.match(unit.text):
        return None
    for before in reversed(units[: unit.position]):
        if before.heading != unit.heading:
            return None
        if _NAMES_SPEAKER.match(before.text):
            return before
    return None


def _line_before(unit: Unit, units: list[Unit]) -> Unit | None:
    """The text line before `unit` in its section; a line of the text reads past an admonition between them
    ("… we pass in the `tokenUrl` parameter." / a tip / "This parameter doesn't create that endpoint")."""
    at = unit.position - 1
    while at >= 0 and units[at].aside and not unit.aside and units[at].heading == unit.heading:
        at -= 1
    if at < 0:
        return None
    before = units[at]
    if before.heading != unit.heading or before.note or (_introduces(before) and not _way_given(unit, before)):
        return None
    return before


# "这样，缺失的前端路径会返回普通的 `404`" (this way, …) goes on from the way given before the example: "…请使用
# `fallback=None`：". Other openings past an example point to what the example shows, and "This would be similar
# to:" says nothing itself.
_THIS_WAY = re.compile(r"^(?:这样|这么做|如此|(?:in )?(?:this|that) way\b)", re.I)


def _way_given(unit: Unit, before: Unit) -> bool:
    return bool(_THIS_WAY.match(unit.text)) and "`" in before.text


def _introduces(unit: Unit) -> bool:
    """ "This would be similar to:" opens an example; it gives no reason."""
    return unit.text.rstrip().endswith((":", "："))
