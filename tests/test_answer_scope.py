"""dev24's misses (stop 45): an extractive answer that is about the thing the question names, that gives a
why-question's reason even when the best line has none beside it, that quotes a shared note once and on one
page, and that reads a comparative or a `.method()` as the question meant it."""

from __future__ import annotations

import pytest

from conftest import evidence_under
from kb_agent.agent import (
    answer_types,
    asked_code,
    asked_means,
    extractive,
    name_kinds,
    quote_selection,
    shape,
    vocabulary,
)
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.extractive import extractive_sentences, rank
from kb_agent.agent.step_rules import decompose
from test_extractive_context import FILES_NOTE, FORMS_NOTE

_evidence = evidence_under


def _weights(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


MIDDLEWARE_ZH = "`compresslevel` - GZip 压缩使用的级别，为 1 到 9 的整数。默认为 `9`。"
GZIP_ROUTE_ZH = (
    "首先，我们创建一个 `GzipRequest` 类，它会重写 `Request.body()` 方法。\n\n如果请求头中没有 `gzip`，则不会尝试解压。"
)


@pytest.mark.parametrize("rule", [True, False], ids=["line_about_the_named_code", "control_any_passage"])
def test_a_line_whose_passage_never_names_the_asked_code_name_does_not_answer(monkeypatch, rule):
    """dev24 u2403 (GzipRequest 默认使用的压缩级别是多少？) was answered with GZipMiddleware's `compresslevel`:
    the question names a class a passage found holds, and that line's passage never names it."""
    if not rule:
        monkeypatch.setattr(asked_code, "code_names", lambda question, asked: set())
    sources = [
        _evidence(MIDDLEWARE_ZH, "zh/advanced/middleware.md", ["高级中间件", "`GZipMiddleware`"], 86),
        _evidence(GZIP_ROUTE_ZH, "zh/how-to/custom-request-and-route.md", ["自定义 `GzipRequest` 类"], 39),
    ]
    ranked = rank("GzipRequest 默认使用的压缩级别是多少？", sources, weights=_weights)
    assert any("compresslevel" in u.text for u in ranked) is not rule


def test_an_acronym_is_no_code_name_a_passage_must_write():
    """ "Which HTTP methods …?" - the line naming `POST` sits in a passage that never writes "HTTP"."""
    sources = [
        _evidence("To send data, you should use one of: `POST`, `PUT`, `DELETE` or `PATCH`.", "body.md",
                  ["Request Body"], 5),
        _evidence("Read about HTTP in the MDN docs.", "http.md", ["HTTP"], 1),
    ]  # fmt: skip
    found = extractive_sentences("Which HTTP methods should you use to send data?", sources, weights=_weights)
    assert any("`POST`" in s.text for s in found)


@pytest.mark.parametrize(
    ("question", "answered"),
    [("What is the default port of the server?", False), ("Which port does the server listen on by default?", True)],
    ids=["asked_the_default", "control_by_default_asks_what_it_does"],
)
def test_asked_a_default_a_line_that_never_says_default_does_not_answer(question, answered):
    """Asked what something defaults to, a line stating some other value of it answers another question; "by
    default" is how the thing behaves, and a line saying what it does answers it."""
    sources = [_evidence("The server listens on port 8000 when you run it.", "server.md", ["Server"], 3)]
    assert bool(rank(question, sources, weights=_weights)) is answered


@pytest.mark.parametrize(
    ("text", "number"),
    [("所有这些消息都将使用同一个连接。", True), ("你可以做一些配置，效果一样。", False), ("最多 3 个。", True)],
    ids=["same_one_is_one", "some_and_alike_are_no_number", "digits"],
)
def test_chinese_one_in_words_of_degree_is_no_number(text, number):
    """一些 (some), 一样 (alike) state no number; 同一个 (the same one) answers "使用几个连接？"."""
    assert bool(answer_types._NUMBER.search(text)) is number


def test_a_line_in_the_other_language_must_say_a_name_it_could_share():
    """A Chinese question naming `GzipRequest` is not answered by an English line of that page that names
    neither it nor anything else the question writes: its relevance would be a guess."""
    sources = [
        _evidence(
            "And those two things, `scope` and `receive`, are what is needed to create a new `Request` instance.\n\n"
            "The `GzipRequest` class decompresses the body.",
            "en/how-to/custom-request-and-route.md",
            ["Custom Request and APIRoute class"],
            67,
        )
    ]
    ranked = rank("GzipRequest 会解压请求体吗？", sources, weights=_weights)
    assert ranked and all("GzipRequest" in u.text for u in ranked)


EVENTS = """Here, the `shutdown` event handler function will write a text line `"Application shutdown"` to a file `log.txt`.

/// tip

Notice that in this case we are using a standard Python `open()` function that interacts with a file.

But `open()` doesn't use `async` and `await`.

So, we declare the event handler function with standard `def` instead of `async def`.

///"""  # noqa: E501


@pytest.mark.parametrize("rule", [True, False], ids=["reason_of_a_later_line", "control_best_line_only"])
def test_asked_why_the_reason_beside_the_next_chosen_line_is_quoted(monkeypatch, rule):
    """dev24 c2401: the best line (the handler writes to `log.txt`) has no reason beside it; the next one ("So,
    we declare … with standard `def`") has it before it: "But `open()` doesn't use `async` and `await`"."""
    if not rule:
        real = quote_selection._reasoned
        monkeypatch.setattr(quote_selection, "_reasoned", lambda q, chosen, sources: real(q, chosen[:1], sources))
    sources = [_evidence(EVENTS, "advanced/events.md", ["Lifespan Events", "`shutdown` event"], 121)]
    question = "Why is the shutdown event handler that writes a text line to a file declared with def?"
    found = extractive_sentences(question, sources, max_sentences=2, weights=_weights)
    assert any("doesn't use" in s.text for s in found) is rule


def test_one_line_allowed_a_line_and_its_reason_come_together():
    """A multi-step answer quotes one line for the question itself: a why-question's line comes with its reason."""
    sources = [_evidence(EVENTS, "advanced/events.md", ["Lifespan Events", "`shutdown` event"], 121)]
    question = "Why is the shutdown event handler declared with def and not async def?"
    found = extractive_sentences(question, sources, max_sentences=1, weights=_weights)
    assert [s.text.split()[0] for s in found] == ["But", "So,"]


@pytest.mark.parametrize("rule", [True, False], ids=["why_is_one_lookup", "control_clause_read_as_bridge"])
def test_a_why_question_with_a_relative_clause_is_one_lookup(monkeypatch, rule):
    """The clause describes the thing asked about ("the shutdown event handler that writes to a file"), which
    the page names: read as a bridge, it cost the model route a router call and an extraction (19 s)."""
    if not rule:
        monkeypatch.setattr(shape, "_REASON_OR_WAY", shape.re.compile(r"(?!)"))
    question = "Why is the event handler that writes to a file declared with def?"
    assert (shape.question_shape(question) == "multi_step") is not rule
    plan = decompose(question)
    assert (plan is not None and plan.rule == "relative_clause") is not rule
    # a bridge question keeps its steps
    assert decompose("Who directed the film that was shot in Leland in 1986?").rule == "relative_clause"


@pytest.mark.parametrize("rule", [True, False], ids=["adjective_known", "control_comparative_unknown"])
def test_a_comparative_is_known_when_its_adjective_is(monkeypatch, rule):
    """dev24 c2407 ("Why is it harder to …?") was refused: no page writes "harder", the page says "more
    difficult", and the knowledge base writes "hard"."""
    if not rule:
        monkeypatch.setattr(vocabulary, "lemma_stems", lambda word: frozenset())  # (the dictionary's lemmas)
    held = lambda terms: {t for t in terms if t in {"hard", "separ", "function"}}  # noqa: E731
    unknown = vocabulary.unknown_terms({"harder", "separ", "function"}, held, "Why is it harder to separate functions?")
    assert (unknown == set()) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["dotted_method", "control_no_dot"])
def test_a_method_written_with_its_dot_is_a_method_name(monkeypatch, rule):
    """dev24 x2401 (BackgroundTasks 用哪个方法…？): the line naming `.add_task()` is the answer."""
    if not rule:
        monkeypatch.setitem(name_kinds._SHAPES, "方法", name_kinds.re.compile(r"@?[a-z_][\w.]*(?:\(\))?"))
    given = name_kinds.new_names("用 `.add_task()` 方法将任务函数传到后台任务对象中：", "用哪个方法添加任务？", "方法")
    assert (".add_task()" in given) is rule


RELEASE = """For example, if you had a database session in a dependency with `yield`, the session would be closed.

This behavior was reverted in 0.118.0."""
PAGE = """Before FastAPI 0.118.0, it would run the exit code before sending the response.

For example, if you had a database session in a dependency with `yield`, the session would be closed.

This behavior was reverted in 0.118.0."""


@pytest.mark.parametrize("pointed", [True, False], ids=["copy_pointed_to_stays", "control_first_copy_stays"])
def test_a_line_an_antecedent_chain_brings_in_is_not_quoted_beside_its_twin(pointed):
    """dev24 c2405: a release note copies the page's paragraph. The page's "This behavior was reverted …" brought
    in the line it points to, which the release note's copy had already given: the same sentence was quoted
    twice. Each sentence is quoted once, the copy the chain needs when one does."""
    release = units_of(0, _evidence(RELEASE, "release-notes.md", ["Release Notes", "0.118.0"], 1670))
    page = units_of(1, _evidence(PAGE, "advanced/advanced-dependencies.md", ["Advanced Dependencies"], 95))
    page[1].pointed_to = pointed
    kept = quote_selection._once([release[0], page[1], page[2]])
    assert [(u.source, u.position) for u in kept] == ([(1, 1), (1, 2)] if pointed else [(0, 0), (1, 2)])


NOT_A_LIMIT = "这不是 **FastAPI** 的限制，而是 HTTP 协议的一部分。"


@pytest.mark.parametrize("rule", [True, False], ids=["follow_up_on_the_chosen_page", "control_follow_up_elsewhere"])
def test_a_note_two_pages_share_is_read_on_the_page_whose_copy_was_chosen(monkeypatch, rule):
    """dev22 z2202: the forms page's note was chosen over the files page's twin (it names no `File`, which the
    question does not ask about); the follow-up "这不是 … 的限制" then brought in the files page's note as what
    it points back to, and the forms page's was dropped."""
    if not rule:
        monkeypatch.setattr(quote_selection, "_copy_beside", lambda *args: None)
    sources = [
        _evidence(f"{FILES_NOTE}\n\n{NOT_A_LIMIT}", "zh/request-files.md", ["请求文件"], 130),
        _evidence(f"{FORMS_NOTE}\n\n{NOT_A_LIMIT}", "zh/request-forms.md", ["表单数据"], 65),
    ]
    question = "Form 参数和 JSON 的 Body 字段不能同时声明是谁的限制？"  # "whose limitation": the follow-up answers
    found = extractive_sentences(question, sources, weights=_weights)
    assert all(s.cited == [2] for s in found) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["headings_break_the_tie", "control_first_twin"])
def test_of_two_copies_saying_as_much_the_one_whose_headings_say_more_is_quoted(monkeypatch, rule):
    """The same sentence on two pages, saying as much of the question and naming as much unasked: the page's
    section about it ("Dependencies with `yield` and `StreamingResponse`") over a release note."""
    if not rule:
        monkeypatch.setattr(quote_selection, "_says_more", lambda unit, asked, question: (unit.own,))
    line = "The exit code of a dependency with `yield` runs after the response is sent."
    sources = [
        _evidence(line, "release-notes.md", ["Release Notes", "Fixes"], 1672),
        _evidence(line, "advanced-dependencies.md", ["Dependencies with `yield` and `StreamingResponse`"], 99),
    ]
    found = extractive_sentences("When does the exit code of a dependency with yield run?", sources, weights=_weights)
    assert (found[0].cited == [2]) is rule


def test_a_maximum_size_with_words_between_asks_for_a_number_and_a_release_is_none():
    """dev25 u2501 (the maximum template cache size of Jinja2Templates, which no page gives) was answered with
    "Before FastAPI 0.108.0, … the `name` was the first parameter": "maximum template cache size" asks for a
    number, and a release states no quantity."""
    question = "What is the maximum template cache size of Jinja2Templates?"
    assert 1 in answer_types.asked_types(question)
    release = _evidence("Before FastAPI 0.108.0, the `Jinja2Templates` `name` was the first parameter.", "t.md",
                        ["Templates"], 34)  # fmt: skip
    sized = _evidence("`Jinja2Templates` keeps a template cache of at most 400 entries.", "t.md", ["Templates"], 40)
    assert not rank(question, [release], weights=_weights)
    assert rank(question, [sized], weights=_weights)


@pytest.mark.parametrize(
    ("question", "text", "states"),
    [
        ("How many certificates can one domain request per week?", "One server can have several certificates.", False),
        ("How many certificates can one domain request per week?", "A domain may get 50 certificates a week.", True),
        ("How many certificates can one server have?", "One server can have several certificates.", True),
        ("每周最多可以申请多少个证书？", "每个域名最多 50 个证书。", False),
        ("每周最多可以申请多少个证书？", "每个域名每星期最多 50 个证书。", True),
    ],
    ids=["rate_no_unit", "rate_in_unit", "no_rate", "zh_rate_no_unit", "zh_rate_in_unit"],
)
def test_a_rate_asked_is_stated_only_in_its_unit(question, text, states):
    """dev30 u3002 (How many certificates can one domain request from Let's Encrypt per week?, never said) was
    answered with "one single server … several HTTPS certificates": "one" is a number, but not one per week."""
    assert answer_types.states_each(answer_types.asked_types(question), text, question) is states


def test_control_without_the_unit_check_any_number_states_a_rate(monkeypatch):
    question = "How many certificates can one domain request per week?"
    monkeypatch.setattr(answer_types, "_counts_in", lambda question, text: True)
    assert answer_types.states_each(answer_types.asked_types(question), "One server, several certificates.", question)


NOTE = """When you import `Query`, `Path` and others from `fastapi`, they are actually functions.

That when called, return instances of classes of the same name.

So, you import `Query`, which is a function. And when you call it, it returns an instance of a class also named `Query`.

These functions are there (instead of just using the classes directly) so that your editor doesn't mark errors about their types."""  # noqa: E501


@pytest.mark.parametrize("rule", [True, False], ids=["line_giving_a_cause", "control_no_cause_read"])
def test_asked_why_a_line_giving_a_cause_is_quoted(monkeypatch, rule):
    """dev25 c2502 (Why are Query, Path and the others functions instead of classes?) quoted the lines saying they
    are functions; the reason was the line saying "so that your editor doesn't mark errors"."""
    if not rule:
        monkeypatch.setattr(extractive, "gives_cause", lambda text: False)
        monkeypatch.setattr(quote_selection, "states_own_cause", lambda text: False)
    sources = [_evidence(NOTE, "tutorial/path-params-numeric-validations.md", ["Recap"], 144)]
    found = extractive_sentences("Why are Query, Path and the others functions instead of classes?", sources,
                                 weights=_weights)  # fmt: skip
    assert any("so that your editor" in s.text for s in found) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["translation_read", "control_guessed_credit"])
def test_an_other_language_line_counts_less_when_the_translation_says_its_names(monkeypatch, rule):
    """dev25 z2502 (每个操作的 operation_id 必须满足什么要求？) was answered with the English line naming
    `operation_id` - credited three quarters for every Chinese word it cannot be read for - over the Chinese
    page's "务必确保每个操作的 `operation_id` 都是唯一的"."""
    if not rule:
        monkeypatch.setattr(extractive, "ECHOED", extractive.UNREADABLE)
    # (asked in other words than dev25's "必须满足什么要求", which now reads as asking a requirement: stop 69)
    weights = {"限制": 4.7, "每个": 3.2, "operation_id": 6.3, "操作": 2.4, "生成": 5.9}
    sources = [
        _evidence("You can set the OpenAPI `operationId` with the parameter `operation_id`.",
                  "en/advanced/path-operation-advanced-configuration.md", ["OpenAPI operationId"], 11),
        _evidence("务必确保每个操作的 `operation_id` 都是唯一的。",
                  "zh/advanced/path-operation-advanced-configuration.md", ["OpenAPI 的 operationId"], 13),
    ]  # fmt: skip
    ranked = rank("每个操作的 operation_id 在生成时有什么限制？", sources, weights=lambda asked: weights)
    assert ("唯一" in ranked[0].text) is rule


OPERATION_ID = _evidence(
    "If you want to use your APIs' function names as `operationId`s, you can pass a custom "
    "`generate_unique_id_function` to `FastAPI`.\n\nThe function receives each `APIRoute` and returns the id.\n\n"
    "{* ../../docs_src/path_operation_advanced_configuration/tutorial002_py310.py *}\n\n/// warning\n\n"
    "If you do this, you have to make sure each one of your *path operation functions* has a unique name.\n\n///",
    "advanced/path-operation-advanced-configuration.md",
    ["Path Operation Advanced Configuration"],
    19,
)


@pytest.mark.parametrize("rule", [True, False], ids=["goes_on_from_the_line_before", "control_judged_alone"])
def test_a_sentence_pointing_back_is_on_the_question_through_the_one_before(monkeypatch, rule):
    """dev25 x2502: "If you do this, you have to make sure each one of your *path operation functions* has a
    unique name" names neither `generate_unique_id_function` nor `operationId`: the claim check removed it as
    off the question, though it goes on from the line before, which names both."""
    from kb_agent.agent.citations import CheckedAnswer
    from kb_agent.agent.sentences import split_sentences

    if not rule:
        monkeypatch.setattr(CheckedAnswer, "_goes_on", lambda self, claim: False)
    question = "What must be true of the function names when generate_unique_id_function uses them as operationId?"
    checked = CheckedAnswer([OPERATION_ID], question, anchors=["generate_unique_id_function", "operationId"])
    first, second = split_sentences(
        "If you want to use your APIs' function names as `operationId`s, you can pass a custom "
        "`generate_unique_id_function` to `FastAPI` [1]. If you do this, you have to make sure each one of your "
        "*path operation functions* has a unique name [1]."
    )
    assert checked.add(first)
    assert bool(checked.add(second)) is rule
    alone = CheckedAnswer([OPERATION_ID], question, anchors=["generate_unique_id_function", "operationId"])
    assert alone.add(second) == ""  # with nothing before it, it is judged alone


BODY_TUTORIAL = """You can declare path parameters and request body at the same time.

You can also declare **body**, **path** and **query** parameters, all at the same time."""
BODY_INTRO = "To declare a **request** body, you use Pydantic models with all their power and benefits."


@pytest.mark.parametrize("rule", [True, False], ids=["means_first", "control_ability_counts_as_means"])
def test_asked_how_a_line_saying_how_opens_the_answer(monkeypatch, rule):
    """The demo question, "How do I declare a request body?", was answered "You can also declare **body**, **path**
    and **query** parameters …" first: a line saying one can do what is asked is no way to do it, and the
    answer read in the order the passages were found. The line naming the means now opens it."""
    if not rule:
        monkeypatch.setattr(asked_means, "_only_able", lambda text, question: False)
    sources = [
        _evidence(BODY_TUTORIAL, "tutorial/body.md", ["Request Body", "Request body + path parameters"], 133),
        _evidence(BODY_INTRO, "tutorial/body.md", ["Request Body"], 9),
    ]
    found = extractive_sentences("How do I declare a request body?", sources, weights=_weights)
    assert found[0].text.startswith("To declare") is rule


def test_the_passage_of_the_best_line_comes_first_in_reading_order_within_it():
    """Lines keep their reading order within a passage (a line and the one it points back to), but the passage
    holding the best line opens the answer."""
    sources = [
        _evidence("Several workers may start at once on a big machine.", "deployment/concepts.md", ["Workers"], 1),
        _evidence(
            "You can start several workers with the `--workers` option.", "deployment/workers.md", ["Workers"], 30
        ),
    ]
    found = extractive_sentences("How do I start several workers?", sources, weights=_weights)
    assert [s.cited for s in found] == [[2], [1]]
