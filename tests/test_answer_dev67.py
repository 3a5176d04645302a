"""Stop 67, second held-out set: what dev67 showed - Chinese frame words (的话, 方面) read as words the pages must
write, a Chinese word judged unknown by an overlapping piece of it (试工 of 测试工具), "It won't be serialized …"
read without the line it speaks of, and "What does the app respond with?" not read as asking for the response."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, quoted_text
from kb_agent.agent import example_lines, question_terms, reasons, vocabulary
from kb_agent.agent.question_terms import key_terms
from kb_agent.agent.vocabulary import RICH_VOCABULARY, unknown_terms
from kb_agent.text.tokenize import tokenize


@pytest.mark.parametrize(
    ("question", "framing"),
    [
        ("不用 FastAPI 而直接用 Starlette 的话，需要自己实现什么？", "的话"),  # dev67 z6704
        ("大多数基准测试不会测试工具的哪些方面？", "方面"),  # dev67 z6708
    ],
)
def test_chinese_frame_words_are_no_key_terms(question, framing):
    assert framing not in key_terms(question)


@pytest.mark.parametrize("rule", [True, False], ids=["cut_end_to_end", "control_overlapping_pieces"])
def test_a_chinese_word_is_known_by_pieces_that_cut_it(monkeypatch, rule):
    """dev67 z6708 was refused: "no passage mentions 测试工具". The tokenizer's pieces of it overlap (测试, 试工,
    工具) and 试工 is written nowhere; the control requires every piece again."""
    if not rule:
        monkeypatch.setattr(vocabulary, "_cut_into", lambda term, pieces, seen: all(p in seen for p in pieces))
    question = "大多数基准测试不会测试工具的哪些方面？"
    page = "基准测试\n而且大多数基准测试并未测试该工具提供的其他功能。不会"
    held = set(tokenize(page))
    unknown = unknown_terms(key_terms(question), lambda probe: probe & held, question, [page], RICH_VOCABULARY)
    assert ("测试工具" in unknown) is not rule


def test_a_chinese_word_with_an_unwritten_piece_stays_unknown():
    held = {"测试"}
    assert not vocabulary._cut_into("测试工具", ["测试", "试工", "工具"], held)
    assert vocabulary._cut_into("测试工具", ["测试", "试工", "工具"], {"测试", "工具"})


STATUS = evidence_under(
    "## Additional status codes { #additional-status-codes_1 }\n\n"
    "When you return a `Response` directly, like in the example above, it will be returned directly.\n\n"
    "It won't be serialized with a model, etc.\n\n"
    "Make sure it has the data you want it to have, and that the values are valid JSON.",
    "en/docs/advanced/additional-status-codes.md",
    ["Additional Status Codes"],
    start=19,
)


@pytest.mark.parametrize(
    ("text", "points"),
    [
        ("It won't be serialized with a model, etc.", True),
        ("It should be a `list` of `Depends()`:", True),
        ("它会直接返回。", True),
        ("It's possible to declare more than one.", False),
        ("It doesn't matter which one you use.", False),
        ("It is recommended to use `Annotated`.", False),
    ],
)
def test_a_line_opening_it_points_back_unless_it_is_the_empty_it(text, points):
    assert bool(reasons._IT_REFERS.match(text)) is points


@pytest.mark.parametrize("rule", [True, False], ids=["with_its_antecedent", "control_alone"])
def test_an_it_line_is_read_with_the_line_it_speaks_of(monkeypatch, rule):
    """dev67 c6708 "Does a Response I return directly get serialized with a model?": "It won't be serialized …"
    says no of what the line before it returns directly; the control reads "It" lines alone again, and the line
    that answers is not quoted."""
    if not rule:
        monkeypatch.setattr(reasons, "_IT_REFERS", re.compile(r"(?!)"))
    answer = quoted_text("Does a Response I return directly get serialized with a model?", [STATUS])
    assert "it will be returned directly" in answer
    assert ("won't be serialized" in answer) is rule  # alone it says too little of the question to be quoted


WSGI = evidence_under(
    "## Check it { #check-it }\n\n"
    "Now, every request under the path `/v1/` will be handled by the Flask application.\n\n"
    "And the rest will be handled by **FastAPI**.\n\n"
    "If you run it and go to [http://localhost:8000/v1/](http://localhost:8000/v1/) you will see the response from "
    "Flask:\n\n"
    "```txt\nHello, World from Flask!\n```",
    "en/docs/advanced/wsgi.md",
    ["Including WSGI - Flask, Django, others"],
    start=33,
)


@pytest.mark.parametrize("rule", [True, False], ids=["answered", "control_refused"])
def test_asked_what_an_app_responds_with_the_response_shown_answers(monkeypatch, rule):
    """dev67 t6708 "What does the Flask app mounted at /v1/ respond with?" was refused: no line writes "respond";
    the page writes "you will see the response from Flask:" above it. The control reads "respond" as asked again."""
    if not rule:
        monkeypatch.setattr(question_terms, "_RESPONDS_WITH", re.compile(r"(?!)"))
        monkeypatch.setattr(example_lines, "ASKS_OUTPUT", re.compile(r"(?!)"))
    answer = quoted_text("What does the Flask app mounted at /v1/ respond with?", [WSGI])
    assert ("Hello, World from Flask" in answer) is rule


HUG = evidence_under(
    "### Hug { #hug }\n\n"
    "Hug was one of the first frameworks to implement the declaration of API parameter types using type hints.\n\n"
    "It also was one of the first frameworks to generate a custom schema declaring the whole API in JSON.\n\n"
    "It was not based on a standard like OpenAPI and JSON Schema.\n\n"
    "It has an interesting, uncommon feature: using the same framework, it's possible to create APIs and also CLIs.",
    "en/docs/alternatives.md",
    ["Alternatives, Inspiration and Comparisons", "Hug"],
    start=324,
)


def test_an_it_line_speaks_of_the_line_that_names_it_not_of_the_it_lines_between():
    """'It has an interesting, uncommon feature' is of Hug, named three lines up: it is credited with that line, not
    with "It was not based on a standard …" before it (whose "based" had answered "Which framework is Hug based
    on?")."""
    from kb_agent.agent.evidence_units import units_of

    units = units_of(0, HUG)
    last = next(u for u in units if u.text.startswith("It has an interesting"))
    named = reasons.named_by_it(last, units)
    assert named is not None and named.text.startswith("Hug was one of the first")
    first = next(u for u in units if u.text.startswith("Hug was"))
    assert reasons.named_by_it(first, units) is None
