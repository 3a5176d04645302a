"""Questions that ask for a way to do something ("How can I …?", 如何 …) and the lines that offer one."""

from __future__ import annotations

import functools
import re

from kb_agent.agent.definitions import FOR_THAT
from kb_agent.agent.name_kinds import new_names

# "How can I run code after the response has been sent?" asks for a way; "You can define background tasks to be
# run after returning a response" offers one, "Before 0.118.0 … it would run the exit code after …" recounts one
# "How does FastAPI name the keys …?" asks how the thing behaves, not for a way to do something
ASKS_MEANS = re.compile(
    r"^\s*how (?:can|could|should|would|to)\b|^\s*how (?:do|does) (?:i|we|you|one|someone|users?)\b|如何|怎么|怎样",
    re.I,
)
# "为此，你可以声明 `None` 是有效类型，但不声明默认值：" (to do that, …:) says the way itself before its example: the
# line before it states the goal, the example only shows it
FOR_THE_GOAL = re.compile(rf"{FOR_THAT.pattern}|^to do (?:that|this|so)\b", re.I)
OFFERS_MEANS = re.compile(
    r"\byou (?:can|could|may|need to|have to|should|just)\b(?! not\b| only\b)|^(?:use|to|just|simply)\b|\bby using\b"
    r"|你?可以|只需|使用|通过|^(?:直接|先|再|然后)?[将把]",  # 将/把 opening a line: an instruction ("直接将 … 复制到 …")
    re.I,
)
# "How do I declare a request body?": "You can declare path parameters and request body at the same time" says it
# can be done, "To declare a request body, you use Pydantic models" says how
_ASKED_VERB = re.compile(r"^\s*how (?:do|can|could|should|would) (?:i|we|you|one) (\w+)", re.I)


def _only_able(text: str, question: str) -> bool:
    """The line says one can do what the question asks ("You can also declare …") and names nothing to do it with."""
    able = _ability(question)
    return able is not None and bool(able.search(text)) and not new_names(text, question)


@functools.lru_cache(maxsize=256)
def _ability(question: str) -> re.Pattern | None:
    """ "you can <the question's verb>", built once per question (rank asks it of every line)."""
    verb = _ASKED_VERB.match(question)
    return re.compile(rf"\byou (?:can|could|may) (?:also |just )?{verb.group(1)}\b", re.I) if verb else None


QUOTED_CODE = re.compile(r"`([^`]+)`")  # code quoted in a line


def asks_means(question: str) -> bool:
    return bool(ASKS_MEANS.search(question))


def offers_means(text: str, question: str) -> bool:
    """Does the line offer a way ("you can …", "use …", 将 … 复制到 …)? A line introducing an example does when it
    names the code to use or states the goal first; a line only saying it can be done does not."""
    return (
        bool(OFFERS_MEANS.search(text))
        and (not text.rstrip().endswith((":", "：")) or new_code(text, question) or bool(FOR_THE_GOAL.match(text)))
        and not _only_able(text, question)
    )


def new_code(text: str, question: str) -> bool:
    """The line names code (backticked) the question does not."""
    asked = question.lower()
    return any(code.lower().strip("()") not in asked for code in QUOTED_CODE.findall(text))
