"""dev26's misses (stop 46): a line saying what made a thing so answers why it was; "what happens if …" is
answered by the line saying what follows under that condition; a line pointing back to "this tool" names the tool
the line before it names."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under
from kb_agent.agent import asked_means, extractive, reasons
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.extractive import extractive_sentences

_evidence = evidence_under


def _weights(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


SANIC = "\n\n".join(
    [
        "It was one of the first extremely fast Python frameworks based on `asyncio`. It was made to be very similar "
        "to Flask.",
        "It used [`uvloop`](https://github.com/MagicStack/uvloop) instead of the default Python `asyncio` loop. "
        "That's what made it so fast.",
        "It clearly inspired Uvicorn and Starlette, that are currently faster than Sanic in open benchmarks.",
        "Find a way to have a crazy performance.",
        "That's why **FastAPI** is based on Starlette, as it is the fastest framework available (tested by "
        "third-party benchmarks).",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["what_made_it_is_a_cause", "control_only_because_and_why"])
def test_a_line_saying_what_made_it_so_answers_why(monkeypatch, rule):
    """dev26 c2601 "Why was Sanic so fast?" was answered "Find a way to have a crazy performance. That's why
    **FastAPI** is based on Starlette …": "That's why" gave the reason bonus to the line explaining something
    else, and "That's what made it so fast", after `uvloop`, got none."""
    if not rule:
        monkeypatch.setattr(reasons, "_MADE_IT", re.compile(r"(?!)"))
    sources = [_evidence(SANIC, "alternatives.md", ["Alternatives", "Sanic"], 264)]
    found = extractive_sentences("Why was Sanic so fast?", sources, weights=_weights)
    assert ("uvloop" in found[0].text) is rule


FORMS_ZH = "\n\n".join(
    [
        "在某些特殊使用情况下（可能并不常见），你可能希望将表单字段**限制**为仅在 Pydantic 模型中声明过的字段，"
        "并**禁止**任何**额外**的字段。",
        "你可以使用 Pydantic 的模型配置来 `forbid` 任何 `extra` 字段：",
        "如果客户端尝试发送一些额外的数据，他们将收到**错误**响应。",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["what_follows_answers", "control_setup_restated"])
def test_what_happens_is_answered_by_the_line_saying_what_follows(monkeypatch, rule):
    """dev26 z2604 (客户端发送了模型之外的额外表单字段时会怎样？) was answered with the setup ("你可能希望将表单字段
    限制…", "你可以使用 … `forbid`"), not with what happens: "如果客户端尝试发送…，他们将收到错误响应"."""
    if not rule:
        monkeypatch.setattr(extractive, "states_consequence", lambda text: False)
    sources = [_evidence(FORMS_ZH, "zh/tutorial/request-form-models.md", ["表单模型", "禁止额外的表单字段"], 41)]
    ranked = extractive.rank("客户端发送了模型之外的额外表单字段时会怎样？", sources, weights=_weights)
    assert ranked[0].text.startswith("如果客户端") is rule


def test_a_line_stating_a_condition_alone_or_a_result_alone_says_no_consequence():
    assert reasons.states_consequence("If the client sends extra data, they will receive an error.")
    # 将 here is "put", and there is no condition
    assert not reasons.states_consequence("你可能希望将表单字段限制为仅在模型中声明过的字段。")
    assert not reasons.asks_consequence("What is the default status code?")


BUMP_ZH = "\n\n".join(
    [
        "在很多情况下，如果你使用的是未做自定义的常规 Pydantic 模型，"
        "可以将从 Pydantic v1 迁移到 v2 的大部分过程自动化。",
        "你可以使用同一 Pydantic 团队提供的[`bump-pydantic`](https://github.com/pydantic/bump-pydantic)。",
        "该工具会帮助你自动修改大部分需要变更的代码。",
    ]
)
PARAMS_ZH = (
    "如果你需要在 Pydantic v1 模型中使用 FastAPI 特有的参数工具，如 `Body`、`Query`、`Form` 等，"
    "在完成向 Pydantic v2 的迁移前，可以从 `fastapi.temp_pydantic_v1_params` 导入它们："
)


@pytest.mark.parametrize("rule", [True, False], ids=["this_tool_names_the_one_before", "control_no_name"])
def test_a_line_pointing_back_to_the_kind_asked_gives_the_name_before_it(monkeypatch, rule):
    """dev26 z2602 (哪个工具可以自动把大部分 Pydantic v1 代码迁移到 v2？): "该工具会帮助你自动修改…" says all the
    question asks but the tool's name, which the line before it gives (`bump-pydantic`); a line naming other
    things (`Body`, `Query`) outranked it, and the answer never said the tool."""
    if not rule:
        monkeypatch.setattr(extractive, "points_to_kind", lambda text, kind: False)
    sources = [
        _evidence(PARAMS_ZH, "zh/how-to/migrate.md", ["迁移", "Pydantic v1 参数"], 131),
        _evidence(BUMP_ZH, "zh/how-to/migrate.md", ["迁移", "`bump-pydantic`"], 41),
    ]
    found = extractive_sentences("哪个工具可以自动把大部分 Pydantic v1 代码迁移到 v2？", sources, weights=_weights)
    assert ("bump-pydantic" in found[0].text) is rule


def test_gai_opens_by_pointing_back_but_not_as_should():
    assert reasons.refers_back("该工具会帮助你自动修改大部分需要变更的代码。")
    assert not reasons.refers_back("该如何声明请求体？")


@pytest.mark.parametrize(
    ("question", "search"),
    [
        ("Which file makes the app directory a Python package in the bigger application example?", False),
        ("Which file explains how to deploy?", True),
        ("Which file contains the settings docs?", True),
        ("Which file has the OAuth2 tutorial?", True),
        ("Which page compares FastAPI with Flask and Django?", True),
    ],
)
def test_which_file_doing_something_asks_about_content_not_for_a_search(question, search):
    """dev27 t2701 listed three pages: "Which file makes the app directory a Python package?" asks what a file
    does (`app/__init__.py`); a file that explains, contains or has something is a file search."""
    from kb_agent.agent.rules import route_by_rules

    routed = route_by_rules(question)
    assert (routed is not None and routed[1] == "file_discovery") is search


FRONTEND_ZH = "\n\n".join(
    [
        "你也可以为缺失的前端路径提供一个静态 `404.html` 页面：",
        "如果你不想为缺失的前端路径提供 fallback 文件，请使用 `fallback=None`：",
        "{* ../../docs_src/frontend/tutorial004_py310.py hl[6] *}",
        "这样，缺失的前端路径会返回普通的 `404`。",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["code_naming_intro_is_antecedent", "control_any_intro_skipped"])
def test_a_line_introducing_an_example_with_the_code_to_use_is_what_a_later_line_points_to(monkeypatch, rule):
    """dev27 z2703 (怎样让缺失的前端路径返回普通的 404？) quoted "这样，缺失的前端路径会返回普通的 `404`" without what
    "这样" (this way) is: "请使用 `fallback=None`：", a line introducing an example, was never an antecedent. A
    line that only opens an example ("This would be similar to:") still is none."""
    if not rule:
        monkeypatch.setattr(reasons, "_way_given", lambda unit, before: False)
    units = units_of(0, _evidence(FRONTEND_ZH, "zh/tutorial/frontend.md", ["前端", "禁用 Fallback"], 99))
    this_way = next(u for u in units if u.text.startswith("这样"))
    before = reasons.antecedent(this_way, units)
    assert (before is not None and "fallback=None" in before.text) is rule
    # what an example shows is not the way given before it: "If you do that" after "… use it in `response_class`:"
    shown = units_of(
        0, _evidence("Or use it in `response_class`:\n\nIf you do that, return the URL.", "a.md", ["A"], 1)
    )
    assert reasons.antecedent(shown[-1], shown) is None


EXTRA_QUERY = "\n".join(
    [
        "If a client tries to send some **extra** data in the **query parameters**, they will receive an **error** "
        "response.",
        "",
        "For example, if the client tries to send a `tool` query parameter with a value of `plumbus`, like:",
        "",
        "```http",
        "https://example.com/items/?limit=10&tool=plumbus",
        "```",
        "",
        "They will receive an **error** response telling them that the query parameter `tool` is not allowed:",
        "",
        "```json",
        "{",
        '    "detail": [',
        "        {",
        '            "type": "extra_forbidden",',
        '            "loc": ["query", "tool"],',
        '            "msg": "Extra inputs are not permitted",',
        "        }",
        "    ]",
        "}",
        "```",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["a_key_of_the_kind_gives_one", "control_prose_first"])
def test_a_line_setting_the_kind_asked_as_a_key_answers_which_of_it(monkeypatch, rule):
    """dev28 t2808 (What error type comes back when a client sends a query parameter that the model forbids?):
    the prose line naming `tool` and `plumbus` outranked `"type": "extra_forbidden",`, the only line that says
    which type."""
    if not rule:
        monkeypatch.setattr(extractive, "keys_kind", lambda text, kind: False)
    sources = [_evidence(EXTRA_QUERY, "query-param-models.md", ["Query Parameter Models", "Forbid Extra"], 37)]
    question = "What error type comes back when a client sends a query parameter that the model forbids?"
    found = extractive_sentences(question, sources, weights=_weights, max_sentences=1)
    assert ("extra_forbidden" in found[0].text) is rule


def test_a_key_is_of_the_kind_only_as_the_key_of_a_pair():
    from kb_agent.agent.name_kinds import keys_kind

    assert keys_kind('"type": "extra_forbidden",', "type")
    assert keys_kind('media_type="text/html"', "type") and keys_kind("type: string", "type")
    assert not keys_kind("The type of the response is a string.", "type")
    assert not keys_kind('"loc": ["query", "tool"],', "type")


REQUIRED_NONE_ZH = "\n\n".join(
    [
        "### 必填，但可以为 `None` { #required-can-be-none }",
        "你可以声明一个参数可以接收 `None`，但它仍然是必填的。这将强制客户端必须发送一个值，即使该值是 `None`。",
        "为此，你可以声明 `None` 是有效类型，但不声明默认值：",
        "{* ../../docs_src/query_params_str_validations/tutorial006c_an_py310.py hl[9] *}",
        "## 查询参数列表 / 多个值 { #query-parameter-list-multiple-values }",
        "当你用 `Query` 显式地定义查询参数时，你还可以声明它接收一个值列表，换句话说，接收多个值。",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["to_do_that_gives_the_way", "control_colon_line_offers_none"])
def test_a_line_saying_how_to_do_what_the_line_before_states_offers_the_way(monkeypatch, rule):
    """dev29 z2911 (怎样让一个查询参数可以接收 None，但仍然是必填的？): "为此，你可以声明 `None` 是有效类型，但不声明
    默认值：" ends with a colon before its example, so it was read as introducing code without saying the way, and
    the next section's "你还可以声明它接收一个值列表" was quoted instead."""
    if not rule:
        monkeypatch.setattr(asked_means, "FOR_THE_GOAL", re.compile(r"(?!)"))
    sources = [_evidence(REQUIRED_NONE_ZH, "zh/query-params-str-validations.md", ["查询参数和字符串校验"], 223)]
    found = extractive_sentences("怎样让一个查询参数可以接收 None，但仍然是必填的？", sources, weights=_weights)
    assert any("不声明默认值" in s.text for s in found) is rule


PROXY_HEADERS = "\n".join(
    [
        "This **proxy** would normally set some HTTP headers on the fly before transmitting the request to the "
        "**application server**, to let the application server know that the request is being **forwarded**.",
        "",
        "The proxy headers are:",
        "",
        "* [X-Forwarded-For](https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Headers/X-Forwarded-For)",
        "* [X-Forwarded-Proto](https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Headers/X-Forwarded-Proto)",
        "",
        "```mermaid",
        "sequenceDiagram",
        "    Proxy->>Server: HTTP Request<br/>X-Forwarded-For: [client IP]<br/>X-Forwarded-Proto: https",
        "```",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["link_text_names_a_header", "control_code_only"])
def test_a_header_named_by_a_link_text_answers_which_headers(monkeypatch, rule):
    """dev30 t3005 (Which HTTP headers does a TLS termination proxy add …?): the list of `[X-Forwarded-For](…)`
    links named no header (a header had to be code), so "This proxy would normally set some HTTP headers …",
    which names none, was the answer."""
    from kb_agent.agent import name_kinds

    if not rule:
        monkeypatch.setattr(name_kinds, "_HEADER_KINDS", frozenset())
    sources = [_evidence(PROXY_HEADERS, "deployment/https.md", ["About HTTPS", "Proxy Forwarded Headers"], 197)]
    question = "Which HTTP headers does a TLS termination proxy add to tell the app the request was forwarded?"
    found = extractive_sentences(question, sources, weights=_weights, max_sentences=1)
    assert ("X-Forwarded-For" in found[0].text) is rule


def test_a_mermaid_diagram_is_no_answer():
    units = units_of(0, _evidence(PROXY_HEADERS, "deployment/https.md", ["About HTTPS"], 197))
    assert not any("sequenceDiagram" in u.text or "Proxy->>Server" in u.text for u in units)
    assert any("X-Forwarded-Proto" in u.text for u in units)


def test_a_phrase_with_hyphens_names_no_header():
    """fq08 (What custom header does the middleware example add …?) had "… CORS configurations ([CORS
    (Cross-Origin Resource Sharing)](cors.md)) …" quoted beside `X-Process-Time`: "Cross-Origin" opens a phrase."""
    from kb_agent.agent.name_kinds import new_names

    question = "What custom header does the middleware example add to responses?"
    assert not new_names(
        "add them to your [CORS (Cross-Origin Resource Sharing)](cors.md) configuration", question, "header"
    )
    assert new_names("* [X-Forwarded-For](https://developer.mozilla.org/X-Forwarded-For)", question, "header") == {
        "X-Forwarded-For"
    }
