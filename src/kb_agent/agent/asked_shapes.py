"""Question shapes the extractive ranker rewards a line for matching: asked where, a line naming a file; asked
when to do something, a line setting its condition ("If …, then declare …"); asked the difference between two
things, a line setting them against each other; asked which one thing of a kind ("Which Flask plug-in …?")."""

from __future__ import annotations

import re

from kb_agent.agent.evidence_units import terms
from kb_agent.text.tokenize import tokenize

# "Where do I configure …?": asks for a place to write it, a file ("in a `pyproject.toml` file")
ASKS_WHERE = re.compile(r"^\s*where (?:do|does|should|can|must|is|are|will)\b|在哪(?:个|些)?文件|写在哪", re.I)
# "Where in the specification does the field go?", "放在哪里": where a thing goes, is put or lives
ASKS_PLACE = re.compile(r"^\s*where\b|放在哪|位于哪|在哪(?:里|儿)", re.I)
_SAYS_PLACE = re.compile(
    r"\b(?:goes|go|is placed|are placed|is put|are put|belongs?|lives?|sits?|is located|are located)\s+"
    r"(?:in|inside|outside|under|into|at|on|within)\b|\b(?:is|are|gets?) run in\b|\bruns? in (?:an?|the)\b"
    r"|(?:放在|位于|放到|写在|运行在|执行在|运行于)",
    re.I,
)


def says_place(text: str) -> bool:
    """The line says where something goes, is put or lives ("It goes in the details for each path operation")."""
    return bool(_SAYS_PLACE.search(text))


_FILE_NAMED = re.compile(r"(?<![\w/.-])[\w/-]*\.(?:toml|py|json|ya?ml|cfg|ini|env|txt|lock)\b|\.env\b", re.I)
# a line setting two things against each other
_CONTRASTS = re.compile(
    r"\bin contrast\b|\bwhereas\b|\bunlike\b|\bas opposed to\b|\bdiffers?\b|\bdifferent from\b|\bthe difference\b"
    r"|不同于|与[^，。]{1,30}不同|相比|相对|区别在于|而[^，。]{0,4}(?:是|则)",
    re.I,
)
# "When should I declare …?" asks the condition for a doing: "If you are using a library that …, then declare …"
_ASKS_WHEN_TO = re.compile(r"^\s*when (?:should|do|would|must|can|could) (?:i|we|you|one)\s+(\w+)", re.I)
_IF_THEN = re.compile(r"^(?:if|when)\b.*?,\s*then\s+(.*)$", re.I | re.S)
# "Which Flask plug-in …?", "What tool …?": asks for one thing by its kind
ASKS_WHICH_ONE = re.compile(
    r"^\s*(?:in |from |with |by )?(?:which|what)\s+"
    r"(?!(?:is|was|are|were|does|do|did|has|have|can|could|should|would|will|happens?|if|about)\b)[\w-]+",
    re.I,
)


def names_a_file(text: str, lowered_question: str) -> bool:
    """The line names a file the question does not ("… in a `pyproject.toml` file")."""
    found = _FILE_NAMED.search(text)
    return found is not None and found.group().lower() not in lowered_question


def contrasts(text: str) -> bool:
    return bool(_CONTRASTS.search(text))


def when_to(question: str) -> set[str]:
    """The doing whose condition a "When should I …?" question asks (analysed); empty for other questions."""
    asked = _ASKS_WHEN_TO.search(question)
    return terms(asked.group(1)) if asked else set()


def condition_then(text: str, doing: set[str]) -> bool:
    """The line sets a condition and then says to do it: "If …, then declare your *path operation functions* …"."""
    then = _IF_THEN.match(text)
    return then is not None and bool(doing & terms(then.group(1)))


# a place or body a question asks for by its kind ("In which district …?", "which company …"): a line that names
# one of that kind ("Daxi District", "Boston Beer Company", "University of South Dakota") can answer it
_PROSE_KINDS = (
    "district|county|city|town|village|province|state|country|region|borough|league|company|university|college|"
    "team|club|party|station|river|island|church|school|festival|museum|airport|stadium|studio|label"
)
# the kind is the head of what is asked ("what college preparatory boys' school" asks a school, not a college)
_ASKS_PROSE_KIND = re.compile(
    rf"\b(?:which|what)\s+(?:[a-z-]+\s+)?({_PROSE_KINDS})\b(?=\s*[?,]|\s+(?:is|was|are|were|did|does|do|has|had|"
    r"have|can|could|will|would|of|in|on|at|for|from|by|with|to|that|which|where|whose|who)\b)",
    re.I,
)


def prose_kind(question: str) -> str | None:
    """The kind of place or body asked for, lower-case; None when none is."""
    found = _ASKS_PROSE_KIND.search(question)
    return found.group(1).lower() if found else None


def names_of_kind(text: str, kind: str) -> bool:
    """The line names a thing of that kind: "Daxi District", "University of South Dakota"."""
    noun = kind.capitalize()
    return bool(re.search(rf"\b[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)*\s+{noun}\b|\b{noun}\s+of\s+[A-Z]", text))


# "Who made the illustrations …?": the line crediting someone ("Beautiful illustrations by [Ketrina Thompson]")
# says the making without the verb
_ASKS_MAKER = re.compile(
    r"^\s*who\s+(made|wrote|drew|created|designed|built|developed|illustrated|painted|composed|authored|started)\b",
    re.I,
)
_CREDITS = re.compile(r"\b(?:by|from)\s+\[?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)+")


def maker_verb(question: str) -> set[str]:
    """The terms of the making a "Who made / wrote … ?" question asks about; empty for other questions."""
    found = _ASKS_MAKER.search(question)
    return terms(found.group(1)) if found else set()


def credits_someone(text: str) -> bool:
    """The line credits a person by name: "… by Ketrina Thompson", "… by [Ketrina Thompson](…)"."""
    return bool(_CREDITS.search(text))


# "Which password does the inactive user log in with?": "Password: `secret2`" - a line labelled with the thing
# asked for gives its value after the colon
_LABELLED = re.compile(r"^\s*\**([A-Za-z][\w -]{0,24}?)\**\s*[:：]\s*\**(\S.{0,80})$")


def labelled_value(text: str, question: str) -> str | None:
    """The value a line labelled with the noun a "Which/What <noun> …" question asks for gives ("secret2"), when
    the question does not write it; None otherwise."""
    asked = ASKS_WHICH_ONE.search(question)
    line = _LABELLED.match(text)
    if asked is None or line is None:
        return None
    noun = terms(asked.group().split()[-1])
    if not noun or terms(line.group(1)) != noun:
        return None
    value = line.group(2).strip("`*\"' .")
    return value if value and value.lower() not in question.lower() else None


# "What should the dependencies argument of a path operation decorator be?": asked what a thing must be, the line
# saying what it should be ("It should be a `list` of `Depends()`") answers; a line only naming the thing does not
_ASKS_REQUIRED_FORM = re.compile(r"\b(?:what|which)\b[^?]*\b(?:should|must)\b[^?]*\bbe\s*\?*\s*$", re.I)
_SAYS_REQUIRED_FORM = re.compile(r"\b(?:should|must|has to|needs to)\s+be\s+(?:an?|the|one|of)\b|应该是|必须是", re.I)
# "operation_id 需要满足什么条件？" (what must it meet): the line saying what it must be or do answers ("务必确保每个操作的
# `operation_id` 都是唯一的", "你必须确保你的数据类型正确"), without the words 条件 or 要求
ASKS_REQUIREMENT_ZH = re.compile(r"(?:满足|符合)(?:什么|哪些|哪种|怎样的?|什么样的?)(?:条件|要求)")
_SAYS_REQUIREMENT_ZH = re.compile(r"必须|务必|确保|需要|只能|一定要")


def asks_required_form(question: str) -> bool:
    return bool(_ASKS_REQUIRED_FORM.search(question) or ASKS_REQUIREMENT_ZH.search(question))


def says_required_form(text: str) -> bool:
    return bool(_SAYS_REQUIRED_FORM.search(text) or _SAYS_REQUIREMENT_ZH.search(text))


# "… but was not based on OAuth2": a negation of the word right after it (or one word on)
_DENIAL = re.compile(r"\b(?:not|never)\s+((?:\w+\s+)?\w+)|n't\s+((?:\w+\s+)?\w+)|(?:不是|并非|没有|不)(\w{1,4})", re.I)


def denies_asked(text: str, asked: set[str]) -> bool:
    """The line denies what the question asks of ("Which specification is OpenID Connect based on?": "… but was not
    based on OAuth2"): it tells what is not, where the question asks what is."""
    for m in _DENIAL.finditer(text):
        if m.group(3):  # Chinese: the word right after (不同于路径 denies no 路径)
            if set(tokenize(m.group(3))[:1]) & asked:
                return True
        elif terms(m.group(1) or m.group(2)) & asked:
            return True
    return False
