"""Stop 67: what the held-out set dev66 showed - 几条 read as a word the pages must write, a condition ("If … has
no default, …") read as asking a default, a line pointing back dropped though the line it points to says what it
lacks, and "What should X be?" answered by lines that only name X."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, quoted_text
from kb_agent.agent import answer_types, asked_shapes, question_terms, quote_selection
from kb_agent.agent.question_terms import key_terms
from kb_agent.text.tokenize import tokenize


@pytest.mark.parametrize(
    ("question", "framing"),
    [
        ("把应用部署到 FastAPI Cloud 需要几条命令？", "几条"),  # dev66 x6602
        ("这个流程分几步？", "几步"),
        ("一共有几种认证方式？", "几种"),
        ("需要调用几次接口？", "几次"),
    ],
)
def test_how_many_in_chinese_is_a_question_word(question, framing):
    assert framing not in key_terms(question)


def test_almost_is_no_count():
    assert question_terms._HOW_MANY_ZH.match("几乎") is None
    assert question_terms._HOW_MANY_ZH.match("几条")


@pytest.mark.parametrize("rule", [True, False], ids=["known", "control_unheard"])
def test_a_count_asked_with_ji_is_not_a_word_the_pages_must_write(monkeypatch, rule):
    """dev66 x6602 "需要几条命令？" was refused: "no passage mentions 几条". The control reads 几条 as a key term
    again, and the vocabulary check finds no page writing it."""
    from kb_agent.agent.vocabulary import RICH_VOCABULARY, unknown_terms

    if not rule:
        monkeypatch.setattr(question_terms, "_HOW_MANY_ZH", re.compile(r"(?!)"))
    question = "把应用部署到 FastAPI Cloud 需要几条命令？"
    page = "FastAPI Cloud\n你可以用**一条命令**将你的 FastAPI 应用部署到 FastAPI Cloud。"
    held = set(tokenize(page))
    unknown = unknown_terms(key_terms(question), lambda probe: probe & held, question, [page], RICH_VOCABULARY)
    assert ("几条" in unknown) is not rule


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("If a parameter is typed Optional[str] and has no default, can I call it without passing it?", False),
        ("When no value is given, what is the default timeout?", True),  # asked after the condition
        ("What is the default value of max_age?", True),
        ("如果没有默认值，参数还是必填的吗？", True),  # a Chinese "如果" clause is not cut by this rule
    ],
)
def test_a_condition_naming_a_default_does_not_ask_one(question, asks):
    assert answer_types.asks_default(question) is asks


TYPES = evidence_under(
    "`typing` also has a shortcut to declare that something could be `None`, with `Optional`.\n\n"
    "As an example, let's take this function:\n\n"
    "The parameter `name` is defined as `Optional[str]`, but it is **not optional**, you cannot call the function "
    "without the parameter:\n\n"
    "The `name` parameter is **still required** (not *optional*) because it doesn't have a default value.",
    "en/docs/advanced/advanced-python-types.md",
    ["Advanced Python Types", "Using `Union` or `Optional`"],
    start=19,
)


@pytest.mark.parametrize("rule", [True, False], ids=["quoted", "control_dropped"])
def test_a_line_without_the_word_default_answers_a_condition_on_it(monkeypatch, rule):
    """dev66 c6602: asked "If a parameter is typed Optional[str] and has no default, can I call …", every line not
    saying "default" was dropped as giving some other value; the one that answers says "you cannot call the
    function"."""
    if not rule:
        monkeypatch.setattr(answer_types, "_CONDITION_EN", re.compile(r"(?!)"))
    answer = quoted_text(
        "If a parameter is typed Optional[str] and has no default, can I call the function without passing it?", [TYPES]
    )
    assert ("cannot call the function" in answer) is rule


MOUNT = evidence_under(
    "### Mount the sub-application { #mount-the-sub-application }\n\n"
    "In your top-level application, `app`, mount the sub-application, `subapi`.\n\n"
    "In this case, it will be mounted at the path `/subapi`:\n\n"
    "{* ../../docs_src/sub_applications/tutorial001_py310.py hl[11, 19] *}\n\n"
    "### Check the automatic API docs { #check-the-automatic-api-docs }\n\n"
    "And then, open the docs for the sub-application, at [http://127.0.0.1:8000/subapi/docs]"
    "(http://127.0.0.1:8000/subapi/docs).\n\n"
    "You will see the automatic API docs for the sub-application, including only its own _path operations_, all "
    "under the correct sub-path prefix `/subapi`:",
    "en/docs/advanced/sub-applications.md",
    ["Sub Applications - Mounts"],
    start=23,
)


@pytest.mark.parametrize("rule", [True, False], ids=["with_antecedent", "control_dropped"])
def test_a_line_pointing_back_comes_with_the_line_that_names_what_it_lacks(monkeypatch, rule):
    """dev66 t6608: "In this case, it will be mounted at the path `/subapi`" ranked second but was dropped, as the
    line it points to was not ranked; that line names the sub-application the question asks of."""
    if not rule:
        monkeypatch.setattr(quote_selection, "completes", lambda before, unit, asked, best: False)
    answer = quoted_text("Under which path is the sub-application mounted in the example?", [MOUNT])
    assert ("mounted at the path" in answer) is rule
    assert ("mount the sub-application, `subapi`" in answer) is rule


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What should the dependencies argument of a path operation decorator be?", True),  # dev66 t6604
        ("What type should the value of the JWT sub key be?", True),
        ("Which package must be installed to receive uploaded files?", False),
        ("What should I do next?", False),
    ],
)
def test_asked_what_a_thing_should_be(question, asks):
    assert asked_shapes.asks_required_form(question) is asks


DECORATOR = evidence_under(
    "For those cases, instead of declaring a *path operation function* parameter with `Depends`, you can add a "
    "`list` of `dependencies` to the *path operation decorator*.\n\n"
    "## Add `dependencies` to the *path operation decorator*\n\n"
    "The *path operation decorator* receives an optional argument `dependencies`.\n\n"
    "Its value should be a `list` of `Depends()`:\n\n"
    "{* ../../docs_src/dependencies/tutorial006_an_py310.py hl[19] *}\n\n"
    "These dependencies will be executed/solved the same way as normal dependencies. But their value (if they "
    "return any) won't be passed to your *path operation function*.\n\n"
    "Using these `dependencies` in the *path operation decorator* you can make sure they are executed while avoiding "
    "editor/tooling errors.\n\n"
    "It might also help avoid confusion for new developers that see an unused parameter in your code and could "
    "think it's unnecessary.\n\n"
    "In some cases you don't really need the return value of a dependency inside your *path operation function*.",
    "en/docs/tutorial/dependencies/dependencies-in-path-operation-decorators.md",
    ["Dependencies in path operation decorators"],
    start=9,
)


@pytest.mark.parametrize("rule", [True, False], ids=["quoted", "control_outranked"])
def test_a_line_saying_what_a_thing_should_be_answers_what_it_should_be(monkeypatch, rule):
    """dev66 t6604: "It should be a `list` of `Depends()`" ranked sixth, below lines that only name the argument
    (here the line opens "Its value …": an "It …" line is read with the line before it since dev67)."""
    if not rule:
        monkeypatch.setattr(asked_shapes, "asks_required_form", lambda question: False)
    answer = quoted_text("What should the dependencies argument of a path operation decorator be?", [DECORATOR])
    assert ("should be a `list`" in answer) is rule
