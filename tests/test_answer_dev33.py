"""dev33 misses (stop 49): "the name of the cookie …" asks for a name written as a cookie's, and the passage next
to one naming the code asked about is about it too; a negated verb is held by any negation; a sentence saying the
question's rare word under a line naming the anchor is on the question; the status code a question gives is not
the one it asks for, and 默认 in a condition the question sets asks no default."""

from __future__ import annotations

import pytest

from conftest import evidence_under
from kb_agent.agent import extractive, name_kinds
from kb_agent.agent.answer_types import asked_types, asks_default, states_each
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.question_terms import key_terms, term_credits
from kb_agent.agent.sentences import split_sentences
from kb_agent.agent.step_rules import decompose

COOKIE_QUESTION = "What is the name of the cookie that query_or_cookie_extractor reads when no query q is given?"
DECLARES = "\n\n".join(
    [
        "Let's focus on the parameters declared:",
        "* It also declares an optional `last_query` cookie, as a `str`.",
        "    * If the user didn't provide any query `q`, we use the last query used, which we saved to a cookie "
        "before.",
    ]
)
USES = "\n\n".join(
    [
        "Notice that we are only declaring one dependency in the *path operation function*, the "
        "`query_or_cookie_extractor`.",
        "But **FastAPI** will know that it has to solve `query_extractor` first, to pass the results of that to "
        "`query_or_cookie_extractor` while calling it.",
    ]
)


def _weights(asked: set[str]) -> dict[str, float]:
    """The store's weights, roughly: the function's name is on one page, "cookie" and "query" on many."""
    return {t: {"query_or_cookie_extractor": 6.5}.get(t, 2.5) for t in asked}


@pytest.mark.parametrize("rule", [True, False], ids=["name_of_the_cookie", "control_no_kind_asked"])
def test_the_name_of_a_thing_is_a_name_written_as_that_things(monkeypatch, rule):
    """dev33 t3303 was answered by the line naming the function the question names, which names no cookie; the
    line naming the cookie is in the page's passage before the one naming the function: the page's passages
    count for the code name the question writes."""
    if not rule:
        monkeypatch.setattr(extractive, "asked_kind", lambda question: None)
    sources = [
        evidence_under(USES, "dependencies/sub-dependencies.md", ["Sub-dependencies", "Use the dependency"], 40),
        evidence_under(DECLARES, "dependencies/sub-dependencies.md", ["Sub-dependencies", "Second dependency"], 35),
    ]
    found = extractive_sentences(COOKIE_QUESTION, sources, weights=_weights, max_sentences=1)
    assert bool(found) and ("last_query" in found[0].text) is rule
    # control: a passage of the page further away is not about the function the question names
    apart = [sources[0], evidence_under(DECLARES, "dependencies/sub-dependencies.md", ["Sub-dependencies"], 20)]
    assert not any("last_query" in f.text for f in extractive_sentences(COOKIE_QUESTION, apart, weights=_weights))
    # where no line names a cookie, the others are not dropped: a kind is preferred, not required (prose names
    # no thing as code: "the name of the band …")
    assert extractive_sentences(COOKIE_QUESTION, sources[:1], weights=_weights)
    # what names the cookie is written beside the word; a name elsewhere on the line names something else
    assert name_kinds.asked_kind(COOKIE_QUESTION) == "cookie"
    assert name_kinds.new_names("the cookie named `session` is set", COOKIE_QUESTION, "cookie") == {"session"}
    assert name_kinds.new_names("solve `query_extractor` first", COOKIE_QUESTION, "cookie") == set()
    assert name_kinds.asked_kind("What is the name of the header that carries it?") == "header"


def test_the_name_asked_of_a_described_thing_is_one_lookup():
    """The clause describes the cookie whose name is asked: no first step "What is the name of the cookie"."""
    plan = decompose(COOKIE_QUESTION)
    assert plan is None or plan.steps[0] != "What is the name of the cookie"
    # a thing described by a relation of its own is still a step: "the director of the film that …"
    chained = decompose("Who is the director of the film that was shot in Leland in 1986?")
    assert chained is not None and chained.steps[0] == "the film that was shot in Leland in 1986"


def test_the_frame_of_a_question_is_no_key_term():
    """ "given" in "when no query is given" is a clause's verb, rare in documentation and weighed as if it were the
    subject; "the name of" asks for a name. A negation stays: "If you just don't know, use normal `def`"."""
    assert key_terms(COOKIE_QUESTION) == {"query_or_cookie_extractor", "cooki", "queri", "read"}
    assert "name" in key_terms("Which name does the docs UI show?")
    assert "don't" in key_terms("What should I do if I just don't know whether to use def or async def?")


STATUS_QUESTION = "默认返回 200 的时候，如果数据不存在想返回哪个状态码？"


def test_the_status_code_a_question_gives_is_not_the_one_it_asks_for():
    """dev33 x3303 was answered "假设你想默认返回一个HTTP状态码为“OK”`200`" - the code the question writes."""
    types = asked_types(STATUS_QUESTION)
    assert states_each(types, "但如果数据不存在，你想创建它，并返回一个HTTP状态码为“CREATED”`201`。", STATUS_QUESTION)
    assert not states_each(types, "例如，假设你想默认返回一个HTTP状态码为“OK”`200`。", STATUS_QUESTION)
    # control: asked without giving one, the line's 200 is a status code it states
    assert states_each(types, "例如，假设你想默认返回一个HTTP状态码为“OK”`200`。", "默认会返回哪个状态码？")
    # 默认 in a condition the question sets ("… 的时候，") asks no default; anywhere else it does
    assert not asks_default(STATUS_QUESTION)
    assert asks_default("GzipRequest 默认使用的压缩级别是多少？") and asks_default("默认会返回哪个状态码？")


CURRENT_USER_QUESTION = "Why doesn't FastAPI confuse the current_user parameter with a request body?"


def test_a_negated_verb_is_held_by_any_negation():
    """dev33 c3305: "doesn't" (and "doesn") weighed as two rare words no line of the answer writes; "FastAPI won't
    get confused" says the negation its own way."""
    asked = key_terms(CURRENT_USER_QUESTION)
    held = term_credits({"fastapi", "confus"}, "Here **FastAPI** won't get confused.", asked)
    assert held.get("doesn't") == held.get("doesn") == 0.5  # the same word would be whole
    assert term_credits({"doesn", "doesn't"}, "It doesn't get confused.", asked)["doesn"] == 1.0
    # "won" and "Don" without a contraction are words of their own
    assert "won" not in term_credits(set(), "It did not win.", {"won", "award"})
    # control: a line saying no negation holds neither
    assert "doesn" not in term_credits({"fastapi", "confus"}, "FastAPI gets confused.", asked)


INJECT = "\n".join(
    [
        "## Inject the current user { #inject-the-current-user }",
        "",
        "So now we can use the same `Depends` with our `get_current_user` in the *path operation*:",
        "",
        "Notice that we declare the type of `current_user` as the Pydantic model `User`.",
        "",
        "This will help us inside of the function with all the completion and type checks.",
        "",
        "/// tip",
        "",
        "You might remember that request bodies are also declared with Pydantic models.",
        "",
        "Here **FastAPI** won't get confused because you are using `Depends`.",
        "",
        "///",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["rare_word_under_the_anchor", "control_code_words_only"])
def test_a_sentence_saying_the_rare_word_under_a_line_naming_the_anchor_is_on_the_question(rule):
    """dev33 c3305: the line saying why FastAPI is not confused sits eight lines below `current_user`, in the same
    section; it was removed as off the question."""
    from kb_agent.agent.citations import CheckedAnswer

    passage = evidence_under(INJECT, "security/get-current-user.md", ["Get Current User"], 37)
    subjects = {"confus"} if rule else set()
    checked = CheckedAnswer([passage], CURRENT_USER_QUESTION, anchors=["current_user"], subjects=subjects)
    (sentence,) = split_sentences("Here **FastAPI** won't get confused because you are using `Depends` [1].")
    assert bool(checked.add(sentence)) is rule
    # a sentence without the rare word stays off the question
    other = CheckedAnswer([passage], CURRENT_USER_QUESTION, anchors=["current_user"], subjects={"confus"})
    (unasked,) = split_sentences("You might remember that request bodies are also declared with Pydantic models [1].")
    assert other.add(unasked) == ""


TYPES_ZH = "\n".join(  # extra-data-types.md, as the page writes it
    [
        "* `UUID`:",
        '    * 一种标准的 "通用唯一标识符" ，在许多数据库和系统中用作ID。',
        "    * 在请求和响应中将以 `str` 表示。",
        "* `datetime.datetime`:",
        "    * 一个 Python `datetime.datetime`.",
        "    * 在请求和响应中将表示为 ISO 8601 格式的 `str` ，比如: `2008-09-15T15:53:00+05:00`.",
        "* `datetime.date`:",
        "    * Python `datetime.date`.",
        "    * 在请求和响应中将表示为 ISO 8601 格式的 `str` ，比如: `2008-09-15`.",
        "* `datetime.timedelta`:",
        "    * Python `datetime.timedelta`.",
        "    * 在请求和响应中将表示为 `float` 代表总秒数。",
    ]
)


def test_a_rare_word_under_another_code_name_is_not_on_the_question():
    """dev21 x2102 (datetime.timedelta 在请求和响应中表示成什么？): the item on `UUID` says the same words, in the
    section that names the anchor; the code named last above a line is what it is about."""
    from kb_agent.agent.citations import CheckedAnswer

    question = "datetime.timedelta 在请求和响应中表示成什么？"
    passage = evidence_under(TYPES_ZH, "extra-data-types.md", ["额外数据类型"], 24)
    for said, kept in [
        ("在请求和响应中将表示为 `float` 代表总秒数[1]。", True),
        ("在请求和响应中将以 `str` 表示[1]。", False),
    ]:
        checked = CheckedAnswer([passage], question, anchors=["datetime.timedelta"], subjects={"请求", "响应"})
        (sentence,) = split_sentences(said)
        assert bool(checked.add(sentence)) is kept, said
