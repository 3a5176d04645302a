"""dev37 misses (stop 51): a release note's version and date are in its section's heading, quoted with the line
(not a note on another release, not a number in a heading, not a note saying little of the question); a section's
"It's a Flask plug-in …" is named by its heading; 看作 is 视为; examples after "For example:" are the line's;
a sentence goes on in lower case after its example; ", as the creator needed …" is a cause; asked where, a line
naming a file; "今天就到这里吧" ends a conversation."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, rare_weights
from kb_agent.agent import (
    answer_types,
    asked_shapes,
    evidence_following,
    evidence_units,
    extractive,
    question_terms,
    section_titles,
)
from kb_agent.agent.citations import CheckedAnswer
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.reasons import gives_cause
from kb_agent.agent.rules import is_chitchat
from kb_agent.agent.sentences import Sentence

NOTES = "release-notes.md"
DROP_39 = "\n".join(
    [
        "## 0.129.0 (2026-02-12)",
        "",
        "### Breaking Changes",
        "",
        "* ➖ Drop support for Python 3.9. PR [#14897](https://github.com/fastapi/fastapi/pull/14897).",
        "",
        "### Docs",
        "",
        "* 📝 Update the tutorial for dependencies. PR [#14899](https://github.com/fastapi/fastapi/pull/14899).",
    ]
)
DROP_36 = "\n".join(
    [
        "## 0.80.0 (2022-08-23)",
        "",
        "This version of FastAPI drops support for Python 3.6. Please upgrade to a supported version of Python (3.7 "
        "or above).",
    ]
)
RELEASED = "\n".join(
    [
        "## 0.141.0 (2026-07-29)",
        "",
        "### Features",
        "",
        '* ✨ Add `app.frontend(check_dir="auto")`, to make local development more convenient with `fastapi dev`.',
    ]
)


# the docs' weights, roughly: "FastAPI" is on every page, "version" common, the rest rare
RELEASE_WEIGHTS = rare_weights({"fastapi": 0.5, "version": 1.5, "drop": 5.0, "support": 3.0, "python": 3.0, "3.9": 6.0})


def _said(question: str, sources, **kw) -> str:
    return " ".join(s.text for s in extractive_sentences(question, sources, **kw))


@pytest.mark.parametrize("rule", [True, False], ids=["heading_read", "control_line_alone"])
def test_a_release_note_is_quoted_with_the_heading_giving_its_version(monkeypatch, rule):
    """dev37 t3708: "➖ Drop support for Python 3.9" says no version; its section's heading does. Without the
    heading the note on Python 3.6 answered (its "3.7" read as the version)."""
    if not rule:
        monkeypatch.setattr(section_titles, "titled", lambda unit, types, question: None)
    question = "In which FastAPI version was support for Python 3.9 dropped?"
    sources = [evidence_under(DROP_39, NOTES, ["Release Notes"], 865)]
    found = extractive_sentences(question, sources, weights=RELEASE_WEIGHTS)
    assert ("0.129.0" in " ".join(s.text for s in found)) is rule
    if rule:  # the heading is a sentence of its own, cited to its own line
        checked = CheckedAnswer(sources, question)
        said = "".join(checked.add(sentence) for sentence in found)
        assert "0.129.0" in said and checked.claims[0].citations == [f"{NOTES}:L865-865"]


@pytest.mark.parametrize("rule", [True, False], ids=["named_release_held", "control_any_release"])
def test_a_note_on_another_release_does_not_answer(monkeypatch, rule):
    """dev37 u3701 (unanswerable): asked when Python 3.5 was dropped, the note dropping Python 3.6 answered."""
    if not rule:
        monkeypatch.setattr(answer_types, "named_versions", lambda question: frozenset())
    question = "In which FastAPI version was support for Python 3.5 dropped?"
    found = _said(question, [evidence_under(DROP_36, NOTES, ["Release Notes"], 5052)], weights=RELEASE_WEIGHTS)
    assert (found == "") is rule


def test_a_version_the_question_names_is_not_the_one_it_asks_for():
    question = "In which FastAPI version was support for Python 3.9 dropped?"
    types = answer_types.asked_types(question)
    assert not answer_types.states_each(types, "➖ Drop support for Python 3.9.", question)
    assert answer_types.states_each(types, "0.129.0 (2026-02-12) ➖ Drop support for Python 3.9.", question)
    assert answer_types.holds_version("Python 3.5.2", "3.5")
    assert not answer_types.holds_version("Python 3.50 and 13.5", "3.5")


@pytest.mark.parametrize("rule", [True, False], ids=["date_asked", "control_no_date_type"])
def test_asked_when_a_release_came_out_its_heading_gives_the_date(monkeypatch, rule):
    """dev37 t3710: "When was FastAPI 0.141.0 released?" - the date is in "## 0.141.0 (2026-07-29)"."""
    if not rule:
        monkeypatch.setattr(answer_types, "ANSWER_TYPES", answer_types.ANSWER_TYPES[:5])
    found = _said("When was FastAPI 0.141.0 released?", [evidence_under(RELEASED, NOTES, ["Release Notes"], 74)])
    assert ("2026-07-29" in found) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["most_of_it_said", "control_any_share"])
def test_a_note_saying_little_of_the_question_is_not_answered_by_its_heading(monkeypatch, rule):
    """dev10 u1102 (unanswerable) "Which FastAPI version added GraphQL subscriptions?": "Add docs for GraphQL"
    under "## 0.6.1" is no version that added subscriptions."""
    if not rule:
        monkeypatch.setattr(section_titles, "TITLED_OWN", 0.0)
    notes = "## 0.6.1 (2019-02-20)\n\n* Add docs for GraphQL with Graphene. PR [#48](https://github.com/x/y/pull/48)."
    rare = {"graphql": 6.0, "subscript": 4.0, "add": 2.0, "version": 1.0, "fastapi": 1.0}
    found = _said("Which version added GraphQL subscriptions?", [evidence_under(notes, NOTES, [], 7350)],
                  weights=rare_weights(rare))  # fmt: skip
    assert (found == "") is rule


@pytest.mark.parametrize("rule", [True, False], ids=["no_count_in_titles", "control_titles_count"])
def test_a_number_in_a_heading_counts_nothing(monkeypatch, rule):
    """dev17 u1703 (unanswerable) "How many heroes can the SQL tutorial database store at most?" was answered
    "Read One Hero" / "We can read a single `Hero`"."""
    monkeypatch.setattr(section_titles, "TITLED_OWN", 0.0)  # this guard alone: the bar on what a note says is off
    monkeypatch.setattr(answer_types, "_ARTICLE", re.compile(r"(?!)"))  # and "can … one" read as a bound (dev70)
    if not rule:
        monkeypatch.setattr(answer_types, "TITLED", frozenset({0, 1, 3, 5}))
    text = "## Read One Hero\n\nWe can **read** a single `Hero` from the SQL database of heroes."
    found = _said("How many heroes can the SQL database store at most?", [evidence_under(text, "sql.md", [], 136)],
                  weights=rare_weights({"most": 1.0, "store": 1.0}))  # fmt: skip
    assert (found == "") is rule


ALTERNATIVES = "\n".join(
    [
        "### [Flask-apispec](https://flask-apispec.readthedocs.io/en/latest/) { #flask-apispec }",
        "",
        "It's a Flask plug-in, that ties together Webargs, Marshmallow and APISpec.",
        "",
        "It uses the information from Webargs and Marshmallow to automatically generate OpenAPI schemas.",
        "",
        "This combination of Flask, Flask-apispec with Marshmallow and Webargs was my favorite backend stack.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["named_by_heading", "control_line_alone"])
def test_a_sections_it_is_named_by_its_heading(monkeypatch, rule):
    """dev37 t3706 "Which Flask plug-in ties together Webargs, Marshmallow and APISpec?": the answer is the
    section's title; the line saying it opens "It's a Flask plug-in"."""
    if not rule:
        monkeypatch.setattr(section_titles, "titled_name", lambda unit, units, lowered: None)
    question = "Which Flask plug-in ties together Webargs, Marshmallow and APISpec?"
    found = extractive_sentences(question, [evidence_under(ALTERNATIVES, "alternatives.md", ["Alternatives"], 208)])
    assert (found[0].text == "Flask-apispec") is rule
    assert "ties together" in " ".join(s.text for s in found)


def test_a_topic_heading_names_no_thing():
    """dev29 x2902 was answered "Short" / "It has sensible defaults …": a topic is no name."""
    text = "### Short\n\nIt has sensible **defaults** for everything, with optional configurations everywhere."
    found = _said("What default list does q get when the URL has no q?", [evidence_under(text, "features.md", [], 98)])
    assert not found.startswith("Short")


@pytest.mark.parametrize("rule", [True, False], ids=["one_verb", "control_two_words"])
def test_regarded_as_in_chinese_is_one_verb_however_written(monkeypatch, rule):
    """dev37 z3702 "APIRouter 可以被看作什么？" was refused: the page writes 视为."""
    if not rule:
        monkeypatch.setattr(question_terms, "_regarded_held", lambda term, text: False)
    text = "你可以将 `APIRouter` 视为一个「迷你 `FastAPI`」类。"
    found = _said("APIRouter 可以被看作什么？", [evidence_under(text, "zh/bigger-applications.md", ["更大的应用"], 98)],
                  weights=rare_weights({"apirouter": 4.0, "看作": 7.0}))  # fmt: skip
    assert ("迷你" in found) is rule


CPU_BOUND = "\n".join(
    [
        "Common examples of CPU bound operations are things that require complex math processing.",
        "",
        "For example:",
        "",
        "* **Audio** or **image processing**.",
        "* **Computer vision**: an image is composed of millions of pixels, each pixel has 3 values / colors, "
        "processing that normally requires computing something on those pixels, all at the same time.",
        '* **Machine Learning**: it normally requires lots of "matrix" and "vector" multiplications. Think of a '
        "huge spreadsheet with numbers and multiplying all of them together at the same time.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["examples_read", "control_line_alone"])
def test_the_examples_after_for_example_are_the_lines(monkeypatch, rule):
    """dev37 t3702: the examples of CPU bound operations follow a bare "For example:"; their items are long, so
    each is quoted by its bold name, and the quote is cited to the list."""
    if not rule:
        monkeypatch.setattr(evidence_following, "_examples_below", lambda unit, evidence: (None, 0))
    question = "Which kinds of CPU bound operations does the async page give as examples?"
    sources = [evidence_under(CPU_BOUND, "async.md", ["Concurrency and async / await"], 284)]
    found = extractive_sentences(question, sources)
    assert ("Machine Learning" in found[0].text) is rule
    if rule:
        checked = CheckedAnswer(sources, question)
        assert checked.add(found[0]) and checked.claims[0].citations == ["async.md:L284-290"]


def test_a_list_quote_keeps_its_items_order():
    """The items of a quoted list are matched in order, each as written: the same items reordered are no quote."""
    sources = [evidence_under(CPU_BOUND, "async.md", ["Concurrency and async / await"], 284)]
    question = "Which kinds of CPU bound operations are there?"
    checker = CheckedAnswer(sources, question).checker
    good = checker.check(Sentence(CPU_BOUND.split("\n")[0] + "\n- Computer vision\n- Machine Learning", [1]))
    bad = checker.check(Sentence(CPU_BOUND.split("\n")[0] + "\n- Machine Learning\n- Computer vision", [1]))
    assert good.citations == ["async.md:L284-290"]
    assert bad.citations != good.citations


IMPORTS = "\n".join(
    [
        "If we had imported one after the other, like:",
        "",
        "```Python",
        "from .routers.items import router",
        "from .routers.users import router",
        "```",
        "",
        "the `router` from `users` would overwrite the one from `items` and we wouldn't be able to use them at the "
        "same time.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["sentence_goes_on", "control_old_continuations"])
def test_a_sentence_goes_on_in_lower_case_after_its_example(monkeypatch, rule):
    """dev37 c3705: "If we had imported one after the other, like:" / the example / "the `router` from `users`
    would overwrite …" is one sentence: the consequence asked for."""
    if not rule:
        monkeypatch.setattr(evidence_units, "_CONTINUES", re.compile(r"^(?:and|or|but|so|that|which|then|this|it)\b"))
    question = "What goes wrong if I import the router variable from users and from items one after the other?"
    found = extractive_sentences(question, [evidence_under(IMPORTS, "bigger-applications.md", ["Bigger"], 366)])
    assert any("one after the other" in s.text and "overwrite" in s.text for s in found) is rule


def test_as_giving_a_cause_is_a_reason_as_giving_a_time_is_not():
    """dev37 c3708 "Why did APIStar stop being an API web framework?"."""
    assert gives_cause("It was no longer an API web framework, as the creator needed to focus on Starlette.")
    assert gives_cause("And as it is based on WSGI (instead of ASGI), it is not designed for that.")
    assert not gives_cause("You can process the file as you read it.")


WHERE = "\n\n".join(
    [
        "That `entrypoint` will tell the `fastapi` command where to find the app and how to import it.",
        "You can configure where the `fastapi` command finds your app `entrypoint` in a `pyproject.toml` file.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["file_named", "control_no_place_asked"])
def test_asked_where_a_line_naming_a_file_comes_first(monkeypatch, rule):
    """dev37 t3704 "Where do I configure the entrypoint …?" was answered with the line on what it does."""
    if not rule:
        monkeypatch.setattr(asked_shapes, "ASKS_WHERE", re.compile(r"(?!)"))
    question = "Where do I configure the entrypoint so the fastapi command can find my app?"
    found = extractive_sentences(question, [evidence_under(WHERE, "fastapi-cli.md", ["FastAPI CLI"], 60)])
    assert ("pyproject.toml" in found[0].text) is rule


def test_calling_it_a_day_in_chinese_is_small_talk():
    assert is_chitchat("谢谢你的帮助，今天就到这里吧。")
    assert is_chitchat("先到这儿吧")
    assert not is_chitchat("到这里为止的代码是什么？")


WHEN_DEF = "\n\n".join(
    [
        "If you are coming from another async framework and you are used to defining trivial compute-only *path "
        "operation functions* with plain `def` for a tiny performance gain, please note that the effect would be "
        "quite opposite in **FastAPI**.",
        "If you are using a third party library that doesn't have support for using `await`, then declare your "
        "*path operation functions* as normally, with just `def`.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["condition_then_doing", "control_no_condition_asked"])
def test_asked_when_to_do_something_the_line_setting_its_condition_answers(monkeypatch, rule):
    """dev37 c3701 "When should I declare my path operation functions with plain def instead of async def?": the
    line saying "If …, then declare … with just `def`" is the condition asked for."""
    if not rule:
        monkeypatch.setattr(asked_shapes, "when_to", lambda question: set())
    question = "When should I declare my path operation functions with plain def instead of async def?"
    found = extractive_sentences(question, [evidence_under(WHEN_DEF, "async.md", ["Concurrency"], 30)],
                                 max_sentences=1)  # fmt: skip
    assert ("third party" in found[0].text) is rule


# dev38's misses (later in stop 51)
CONTAINERS = "\n\n".join(
    [
        "By using a pre-made container image it's very easy to **combine** and use different tools.",
        'In contrast to a "**container image**" that is the stored static contents, a "**container**" normally '
        "refers to the running instance, the thing that is being **executed**.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["shape_words_dropped", "control_shape_words_weigh"])
def test_asked_the_difference_between_two_things_a_line_contrasting_them_answers(monkeypatch, rule):
    """dev38 c3802 "What is the difference between a container image and a container?": "different" held
    "difference" and the line contrasting the two ranked under one about different tools."""
    if not rule:
        monkeypatch.setattr(question_terms, "ASKS_DIFFERENCE", re.compile(r"(?!)"))
        monkeypatch.setattr(extractive, "ASKS_DIFFERENCE", re.compile(r"(?!)"))
    question = "What is the difference between a container image and a container?"
    found = extractive_sentences(question, [evidence_under(CONTAINERS, "docker.md", ["Docker"], 74)],
                                 weights=rare_weights({"between": 4.7, "differ": 3.0}), max_sentences=1)  # fmt: skip
    assert ("running instance" in found[0].text) is rule


STARLETTE_1 = "## 0.133.0 (2026-02-24)\n\n### Upgrades\n\n* ⬆️ Add support for Starlette 1.0.0+. PR [#1](https://x.y/1)."
DROP_37 = "\n".join(
    [
        "## 0.104.0 (2023-10-18)",
        "",
        "## Features",
        "",
        "* ✨ Add reference (code API) docs with PEP 727. PR [#10392](https://x.y/10392).",
        "",
        "## Upgrades",
        "",
        "* ⬆️ Drop support for Python 3.7, require Python 3.8 or above. PR [#10442](https://x.y/10442).",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["product_read", "control_any_products"])
def test_a_release_of_another_product_is_not_the_one_named(monkeypatch, rule):
    """dev38 u3802 (unanswerable) "When was FastAPI 1.0.0 released?" was answered with the note adding support for
    Starlette 1.0.0+."""
    if not rule:
        monkeypatch.setattr(answer_types, "holds_version", lambda text, version, question="": version in text)
    notes = [evidence_under(STARLETTE_1, NOTES, ["FastAPI Release Notes"], 773)]
    found = _said("When was FastAPI 1.0.0 released?", notes, weights=rare_weights({"fastapi": 0.5, "1.0.0": 6.0}))
    assert (found == "") is rule


def test_a_release_heading_holds_over_its_same_level_sections():
    """dev38 t3806: "## 0.104.0 (2023-10-18)" / "## Features" / "## Upgrades" - the note under "Upgrades" is still
    0.104.0's; and asked of FastAPI's version, "require Python 3.8" is Python's, no answer by itself."""
    question = "In which FastAPI version was support for Python 3.7 dropped?"
    found = _said(question, [evidence_under(DROP_37, NOTES, ["FastAPI Release Notes"], 3990)], weights=RELEASE_WEIGHTS)
    assert found.startswith("0.104.0 (2023-10-18)")
    assert "Drop support for Python 3.7" in found


def test_a_note_on_another_release_of_the_named_product_is_about_that_one():
    """ "drops support for Python 3.6 … (3.7 or above)" is about Python 3.6, not 3.7."""
    question = "In which FastAPI version was support for Python 3.7 dropped?"
    assert not answer_types.holds_version(DROP_36, "3.7", question)
    assert answer_types.holds_version("Drop support for Python 3.7, require Python 3.8", "3.7", question)
    assert answer_types.holds_version("## 0.100.0 (2023-07-07)", "0.100.0", "When was FastAPI 0.100.0 released?")


@pytest.mark.parametrize("rule", [True, False], ids=["symbol_named", "control_symbol_unread"])
def test_a_symbol_asked_by_its_name_is_written_as_itself(monkeypatch, rule):
    """dev38 t3803 "What does the dot at the end of the docker build command tell Docker?": "Notice the `.` …"."""
    if not rule:
        monkeypatch.setattr(question_terms, "symbol_held", lambda term, text: False)
    text = "\n\n".join(
        [
            "So, it's important to put the docker build command **near the end** of the `Dockerfile`.",
            "Notice the `.` at the end, it's equivalent to `./`, it tells Docker the directory to use to build the "
            "container image.",
        ]
    )
    found = extractive_sentences("What does the dot at the end of the docker build command tell Docker?",
                                 [evidence_under(text, "docker.md", ["Docker"], 329)], max_sentences=1)  # fmt: skip
    assert ("Notice the `.`" in found[0].text) is rule


def test_thanks_for_yesterdays_help_is_small_talk():
    assert is_chitchat("Good morning! Thanks for all the help yesterday.")


RESPONSE_MODEL_ZH = "\n\n".join(
    [
        "最常见的情况是直接返回一个 Response，FastAPI 会把数据转换为 JSON 格式。",
        "你可以在 `response_model` 中声明 Pydantic 模型，FastAPI 会用它来过滤输出数据。",
    ]
)


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("response_model 支持哪种压缩格式？", "压缩格式"),  # dev38 u3803, answered "支持 JSON 格式" by the model
        ("Which compression format does response_model support?", "Which compression format"),
        ("response_model 返回哪种数据格式？", None),  # 数据 is in the passages: a format of that kind may be named
        ("OAuth2 的哪种流程最安全？", None),  # no kind phrase beyond the kind itself
    ],
)
def test_a_kind_no_passage_speaks_of_is_refused_before_the_model(question, unknown):
    """A "Which compression format …?" question over passages that never say "compression": any format a line
    names is not of the kind asked. `kind_unknown` is what `synthesize` refuses on, before quoting or the model."""
    from kb_agent.agent.coverage import kind_unknown

    sources = [evidence_under(RESPONSE_MODEL_ZH, "zh/response-model.md", ["响应模型"], 185)]
    assert kind_unknown(question, sources) == unknown


def test_a_sentences_first_word_owns_no_version():
    """dev24 t2410 "In which FastAPI version was Depends(scope="function") added …?": "In version 0.121.0, FastAPI
    added …" states FastAPI's version ("In" is no product), while "require Python 3.8" states Python's."""
    question = 'In which FastAPI version was Depends(scope="function") added for dependencies with yield?'
    types = answer_types.asked_types(question)
    assert answer_types.states_each(
        types, 'In version 0.121.0, FastAPI added support for `Depends(scope="function")`.', question
    )
    assert not answer_types.states_each(types, "Drop support for Python 3.7, require Python 3.8 or above.", question)


@pytest.mark.parametrize("rule", [True, False], ids=["address_no_release", "control_address_read"])
def test_an_ip_address_is_no_release(monkeypatch, rule):
    """dev39 u3901 (unanswerable) "Which Traefik version does the proxy example require?" was answered with lines
    giving `http://127.0.0.1:8000/app`: "127.0.0" read as a version."""
    if not rule:
        monkeypatch.setattr(answer_types, "_ADDRESS", re.compile(r"(?!)"))
    question = "Which Traefik version does the proxy example require?"
    line = "And now open the URL with the port for Traefik: [http://127.0.0.1:9999/api/v1/app](http://127.0.0.1:9999)."
    assert answer_types.states_each(answer_types.asked_types(question), line, question) is not rule
