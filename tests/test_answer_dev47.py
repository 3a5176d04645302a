"""The misses of stop 57's held-out set (`fastapi_docs_dev47.jsonl`), each with a control that turns its change
off: what a question sets aside ("besides …"), how many answers it wants, the page it points to, a short list item
introducing its own items, a screenshot between list items, who made something, the name narrowing the kind asked
for, where something runs, and a symbol asked on its own."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, rare_weights
from kb_agent.agent import asked_shapes, evidence_following, evidence_units, extractive, question_terms, rules
from kb_agent.agent.question_terms import excluded_capped, key_terms, page_named
from kb_agent.agent.vocabulary import unknown_terms

VALIDATION = evidence_under(
    "### Validation { #validation }\n\n"
    "* Validation for most (or all?) Python **data types**, including:\n"
    "    * JSON objects (`dict`).\n"
    "    * JSON array (`list`) defining item types.\n"
    "    * String (`str`) fields, defining min and max lengths.\n"
    "    * Numbers (`int`, `float`) with min and max values, etc.\n\n"
    "* Validation for more exotic types, like:\n"
    "    * URL.\n"
    "    * Email.\n"
    "    * UUID.\n"
    "    * ...and others.\n\n"
    "All the validation is handled by the well-established and robust **Pydantic**.",
    "en/docs/features.md",
    start=104,
)
SECURITY = evidence_under(
    "### Security and authentication { #security-and-authentication }\n\n"
    "Security and authentication integrated. Without any compromise with databases or data models.\n\n"
    "All the security schemes defined in OpenAPI, including:\n\n"
    "* HTTP Basic.\n"
    "* **OAuth2** (also with **JWT tokens**). Check the tutorial on [OAuth2 with JWT](oauth2-jwt.md).\n"
    "* API keys in:\n"
    "    * Headers.\n"
    "    * Query parameters.\n"
    "    * Cookies, etc.\n\n"
    "Plus all the security features from Starlette (including **session cookies**).",
    "en/docs/features.md",
    start=120,
)
EDITORS = evidence_under(
    "Here's how your editor might help you:\n\n"
    "* in [Visual Studio Code](https://code.visualstudio.com/):\n\n"
    "![editor support](https://fastapi.tiangolo.com/img/vscode-completion.png)\n\n"
    "* in [PyCharm](https://www.jetbrains.com/pycharm/):\n\n"
    "![editor support](https://fastapi.tiangolo.com/img/pycharm-completion.png)",
    "en/docs/features.md",
    start=84,
)
BURGERS = evidence_under(
    "You and your crush eat the burgers and have a nice time. ✨\n\n"
    "/// note\n\n"
    "Beautiful illustrations by [Ketrina Thompson](https://www.instagram.com/ketrinadrawsalot). 🎨\n\n"
    "///\n\n"
    "---\n\n"
    "Imagine you are the computer / program 🤖 in that story.",
    "en/docs/async.md",
    start=138,
)
SERIALIZING = evidence_under(
    "If you declare a [Response Model](../tutorial/response-model.md) FastAPI will use it to serialize the data "
    "to JSON, using Pydantic.",
    "en/docs/advanced/response-directly.md",
    start=5,
)
REGEX_ZH = evidence_under(
    "## 添加正则表达式 { #add-regular-expressions }\n\n"
    "这个特定的正则表达式通过以下规则检查接收到的参数值：\n\n"
    "- `^`：必须以接下来的字符开头，前面没有其他字符。\n"
    "- `fixedquery`：值必须精确等于 `fixedquery`。\n"
    "- `$`：到此结束，在 `fixedquery` 之后没有更多字符。",
    "zh/docs/tutorial/query-params-str-validations.md",
    start=169,
)


def _quoted(question: str, sources, weights) -> str:
    return " ".join(s.text for s in extractive.extractive_sentences(question, sources, weights=weights))


@pytest.mark.parametrize("rule", [True, False], ids=["besides_capped", "control_besides_counts_fully"])
def test_what_a_question_sets_aside_is_not_the_answer(monkeypatch, rule):
    """dev47 t4702: "… besides JSON objects, arrays, strings and numbers?" was answered "JSON array (`list`)
    defining item types", the rarest words being the ones set aside."""
    if not rule:
        monkeypatch.setattr(extractive, "excluded_capped", lambda weight, question: weight)
        # a line introducing a list is also credited with its items' words: off too, or the guard is not seen
        monkeypatch.setattr(extractive, "list_after", lambda unit, evidence: [])
    weights = rare_weights(
        {"exot": 6.0, "array": 5.2, "number": 3.9, "string": 2.9, "object": 2.8, "more": 2.3, "valid": 2.2}
        | {"json": 2.0, "type": 1.8, "fastapi": 0.8}
    )
    question = "Which more exotic types does FastAPI validate besides JSON objects, arrays, strings and numbers?"
    quoted = _quoted(question, [VALIDATION], weights)
    best = extractive.rank(question, [VALIDATION], weights=weights)[0].text
    assert best.startswith("Validation for more exotic types") is rule
    assert ("UUID" in quoted) is rule


def test_the_phrase_set_aside_opens_or_ends_the_question():
    weight = {"openapi": 4.0, "scheme": 4.0, "secur": 2.0, "featur": 3.0, "starlett": 3.0}
    capped = excluded_capped(weight, "Besides the OpenAPI security schemes, which security feature does it get?")
    assert capped["openapi"] == capped["scheme"] == 2.0 and capped["secur"] == 2.0  # said again: kept as is
    assert excluded_capped({"401": 5.0, "响应头": 3.0}, "除了 401 还要添加哪个响应头？")["401"] == 3.0
    assert excluded_capped(weight, "Which security feature does FastAPI get from Starlette?") == weight


@pytest.mark.parametrize("rule", [True, False], ids=["count_page_and_particles_dropped", "control_kept"])
def test_how_many_answers_the_page_pointed_to_and_particles_are_no_key_terms(monkeypatch, rule):
    """dev47 t4701 / t4709 / t4704: "Which two editors …", "… on the … page send back", "… sent among the security
    schemes …": the count, the word page, "back" and "among" are no words an answer line writes."""
    if not rule:
        monkeypatch.setattr(question_terms, "_ANSWER_COUNT", re.compile(r"(?!)"))
        monkeypatch.setattr(question_terms, "_PAGE_POINTER", re.compile(r"(?!)"))
        monkeypatch.setattr(question_terms, "QUESTION_TERMS", question_terms.QUESTION_TERMS - {"back", "among"})
    asked = key_terms("Which two editors does the features page show autocompletion in?")
    assert ("two" not in asked and "page" not in asked) is rule
    asked = key_terms("Which format does the example on the return-a-response-directly page send back?")
    assert ("back" not in asked) is rule
    assert ("among" not in key_terms("Where can API keys be sent among the security schemes?")) is rule


def test_the_page_a_question_points_to_is_held_by_its_title():
    named = page_named("Which format does the example on the return-a-response-directly page send?")
    assert "return-a-response-directly" in named and "exampl" not in named
    assert page_named("Which two editors does the features page show?") == {"featur"}


@pytest.mark.parametrize("rule", [True, False], ids=["introducing_item_is_a_unit", "control_too_short"])
def test_a_short_list_item_introducing_its_items_is_quoted_with_them(monkeypatch, rule):
    """dev47 t4704: "* API keys in:" (12 characters, under the 15-character floor) over "Headers." / "Query
    parameters." / "Cookies, etc." was no answer line, and the question was refused."""
    if not rule:
        monkeypatch.setattr(evidence_units, "_items_below", lambda lines, at, deeper=True: False)
    texts = [u.text for u in evidence_units.units_of(0, SECURITY)]
    assert ("API keys in:" in texts) is rule
    weights = rare_weights({"scheme": 4.3, "sent": 3.6, "key": 3.4, "secur": 2.2, "support": 2.2})
    quoted = _quoted("Where can API keys be sent among the security schemes FastAPI supports?", [SECURITY], weights)
    assert ("Cookies" in quoted and "Headers" in quoted) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["screenshot_skipped", "control_screenshot_ends_the_list"])
def test_a_screenshot_between_list_items_does_not_end_the_list(monkeypatch, rule):
    """dev47 t4701: "* in [Visual Studio Code](…):" / its screenshot / "* in [PyCharm](…):" is one list."""
    if not rule:
        monkeypatch.setattr(evidence_following, "_IMAGE", re.compile(r"(?!)"))
    intro = evidence_units.units_of(0, EDITORS)[0]
    items = evidence_following.list_after(intro, EDITORS)
    assert any("PyCharm" in item for item in items) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["credit_says_the_making", "control_verb_unsaid"])
def test_who_made_is_answered_by_the_line_crediting_someone(monkeypatch, rule):
    """dev47 t4712: "Who made the illustrations of the burgers story?" - "Beautiful illustrations by [Ketrina
    Thompson](…)" never says "made", and lost to lines about the story."""
    if not rule:
        monkeypatch.setattr(asked_shapes, "maker_verb", lambda question: set())
    weights = rare_weights({"stori": 6.0, "illustr": 5.4, "burger": 5.0, "made": 4.8})
    found = extractive.rank("Who made the illustrations of the burgers story?", [BURGERS], weights=weights)
    assert (bool(found) and "Ketrina" in found[0].text) is rule
    assert asked_shapes.credits_someone("Beautiful illustrations by [Ketrina Thompson](https://x.org).")
    assert not asked_shapes.credits_someone("It is used by many people.")


@pytest.mark.parametrize("rule", [True, False], ids=["qualifier_required", "control_any_library"])
def test_the_name_narrowing_the_kind_must_be_said(monkeypatch, rule):
    """dev47 u4736: "Which XML library does FastAPI use to serialize XML responses?" was answered by the line
    serializing to JSON with Pydantic (a library, but not for XML)."""
    if not rule:
        monkeypatch.setattr(extractive, "kind_qualifier", lambda question: set())
    weights = rare_weights({"xml": 5.0, "librari": 3.0, "serial": 3.0})
    found = extractive.rank("Which XML library does FastAPI use to serialize XML responses?", [SERIALIZING],
                            weights=weights)  # fmt: skip
    assert (not found) is rule


def test_where_it_runs_is_a_place():
    """dev47 z4728: "用普通 def 定义的依赖项会在哪里运行？" - "它将被运行在外部线程池中" says where."""
    assert asked_shapes.says_place("如果一个依赖是标准的 `def` 函数而不是 `async def`，它将被运行在外部线程池中。")
    assert asked_shapes.says_place("it is run in an external threadpool that is then awaited")
    assert not asked_shapes.says_place("你可以使用 `async def` 或普通的 `def`。")


@pytest.mark.parametrize("rule", [True, False], ids=["symbol_asked_by_name", "control_symbol_dropped"])
def test_a_symbol_asked_on_its_own(monkeypatch, rule):
    """dev47 z4726: "正则表达式示例里的 ^ 表示什么？" - the tokenizer drops "^", and a CORS line about regular
    expressions answered. The symbol is asked by its name, held by a line coding it, and known to the pages."""
    if not rule:
        monkeypatch.setattr(question_terms, "_LONE_SYMBOL", re.compile(r"(?!)"))
    question = "正则表达式示例里的 ^ 表示什么？"
    assert ("caret" in key_terms(question)) is rule
    quoted = _quoted(question, [REGEX_ZH], rare_weights({"caret": 7.6, "正则表达式": 6.5, "表示": 4.4, "示例": 3.2}))
    assert ("开头" in quoted) is rule
    assert not unknown_terms({"caret"}, lambda probe: set(), question, [REGEX_ZH.text])


def test_where_is_it_explained_is_a_file_search():
    """dev47 f4742: "Where is a regular expression pattern for a query parameter explained?" asks for a page."""
    assert rules._FILE_DISCOVERY_RE.search("Where is a regular expression pattern for a query parameter explained?")
    assert not rules._FILE_DISCOVERY_RE.search("Where is the regular expression pattern checked?")


def test_an_operator_between_names_is_no_symbol_asked():
    """After dev47: "str | None" asked for "pipe", which no page writes alone, and the question was refused."""
    assert "pipe" not in key_terms("Why declare a variable as str | None rather than just str?")
    assert "dollar" in key_terms("What does $ mean at the end of the pattern?")


def test_a_common_narrowing_name_goes_without_saying(monkeypatch):
    """After dev47: "Which HTTP methods should you use …?" - body.md's note naming `POST`, `PUT` … never says HTTP,
    and HTTP, common in the docs, is not what the question turns on: the lines found are those found without it."""
    question = "Which HTTP methods can send data?"
    weights = rare_weights({"method": 3.5, "send": 3.2, "http": 1.9})
    found = [u.text for u in extractive.rank(question, [SERIALIZING, NOTE], weights=weights)]
    monkeypatch.setattr(extractive, "kind_qualifier", lambda question: set())
    assert found and found == [u.text for u in extractive.rank(question, [SERIALIZING, NOTE], weights=weights)]


NOTE = evidence_under(
    "To send data, you should use one of these methods: `POST` (the most common), `PUT`, `DELETE` or `PATCH`.",
    "en/docs/tutorial/body.md",
    start=13,
)


@pytest.mark.parametrize("rule", [True, False], ids=["several_months_is_no_count", "control_asks_a_number"])
def test_several_beside_another_question_word_asks_no_number(monkeypatch, rule):
    """dev48 z4820: "在开始编写 FastAPI 之前，作者花了几个月研究哪些规范？" asks which specs; 几个月 ("several
    months") had made it ask a number, and it was refused."""
    from kb_agent.agent import answer_types

    if not rule:
        monkeypatch.setattr(answer_types, "_SEVERAL_ZH", re.compile(r"(?!)"))
    assert (1 not in answer_types.asked_types("在开始编写 FastAPI 之前，作者花了几个月研究哪些规范？")) is rule
    assert 1 in answer_types.asked_types("部署时每个 CPU 核心应该运行几个 worker？")


def test_the_same_is_no_count():
    """dev48 u4832: "同一 API 程序" (the same program) stated no number."""
    from kb_agent.agent import answer_types

    assert not answer_types._NUMBER.search("当你运行同一 API 程序的多个进程时，它们通常称为 workers。")
    assert answer_types._NUMBER.search("每个容器运行一个 Uvicorn 进程")


@pytest.mark.parametrize("rule", [True, False], ids=["author_is_i", "control_author_unsaid"])
def test_the_author_writes_in_the_first_person(monkeypatch, rule):
    """dev48 z4820: "作者花了几个月研究哪些规范？" - "我就花了几个月的时间研究 OpenAPI …" never says 作者."""
    if not rule:
        monkeypatch.setattr(question_terms, "_FIRST_PERSON", re.compile(r"(?!)"))
    held = question_terms.term_credits(
        set(), "我就花了几个月的时间研究 OpenAPI、JSON Schema、OAuth2 等规范。", {"作者"}
    )
    assert bool(held.get("作者")) is rule
    assert not question_terms.term_credits(set(), "我们简单回顾一下历史。", {"作者"})  # "we" is no author


REGEX_EN = evidence_under(
    "This specific regular expression pattern checks that the received parameter value:\n\n"
    "* `^`: starts with the following characters, doesn't have characters before.\n"
    "* `fixedquery`: has the exact value `fixedquery`.\n"
    "* `$`: ends there, doesn't have any more characters after `fixedquery`.",
    "en/docs/tutorial/query-params-str-validations.md",
    start=175,
)


@pytest.mark.parametrize("rule", [True, False], ids=["sibling_item_cited", "control_one_item"])
def test_a_sentence_joining_two_list_items_cites_both(monkeypatch, rule):
    """dev47 x4733 (model): "The caret ^ … means that the value must start with the characters "fixedquery"" was
    cited to L179 ("`$`: ends there … after `fixedquery`") alone; L177 says the start."""
    from kb_agent.agent.claims import ClaimChecker
    from kb_agent.agent.sentences import split_sentences

    if not rule:
        monkeypatch.setattr(ClaimChecker, "_telling", lambda self, terms, spans: spans)
    sentence = split_sentences(
        "The caret ^ in the regular expression pattern example means that the received parameter value must start "
        'with the characters "fixedquery" [1].'
    )[0]
    claim = ClaimChecker([REGEX_EN], "What does the caret ^ mean in the regular expression pattern example?").check(
        sentence
    )
    assert claim.supported
    assert any(start <= 177 <= end for _, start, end in claim.spans) is rule


def test_a_prompt_opening_a_command_is_no_symbol_asked():
    assert "dollar" not in key_terms("$ fastapi dev main.py - what does it start?")


OPERATION_IDS = evidence_under(
    "OpenAPI requires that each operation ID is unique across all the *path operations*, so FastAPI uses the "
    "**function name**, the **path**, and the **HTTP method/operation** to generate that operation ID, because that "
    "way it can make sure that the operation IDs are unique.",
    "en/docs/advanced/generate-clients.md",
    start=110,
)


@pytest.mark.parametrize("rule", [True, False], ids=["each_item_checked", "control_items_unchecked"])
def test_each_item_of_a_listed_answer_must_be_cited(monkeypatch, rule):
    """All 48 sets with the model, dev20 t2004: "FastAPI combines the first tag, the path operation name, and the
    HTTP method …" was kept, cited to L110, which says function name, path and method: the first tag is not there."""
    from kb_agent.agent.claims import ClaimChecker
    from kb_agent.agent.sentences import split_sentences

    if not rule:
        monkeypatch.setattr(ClaimChecker, "_listed_items_held", lambda self, sentence, spans: True)
    question = "Which three things does FastAPI combine by default to generate a path operation's operation ID?"
    checker = ClaimChecker([OPERATION_IDS], question)
    wrong = "FastAPI combines the first tag, the path operation name, and the HTTP method/operation to generate it [1]."
    right = "FastAPI combines the function name, the path, and the HTTP method/operation to generate it [1]."
    assert checker.check(split_sentences(wrong)[0]).supported is not rule
    assert checker.check(split_sentences(right)[0]).supported
