"""dev40 misses (stop 52): an irregular participle is its verb ("Who builds …?" / "is built by"), "文档举例说…"
(the docs say, for example) and "多长" (how long) frame a question, and a function is named as a call on a
class with its arguments (`SQLModel.metadata.create_all(engine)`)."""

from __future__ import annotations

import re

from conftest import evidence_under, rare_weights
from kb_agent.agent import evidence_units, name_kinds, question_terms
from kb_agent.agent.extractive import rank

CLOUD = "\n".join(
    [
        "**[FastAPI Cloud](https://fastapicloud.com)** is built by the same author and team behind **FastAPI**.",
        "",
        "It streamlines the process of **building**, **deploying**, and **accessing** an API with minimal effort.",
        "",
        "FastAPI Cloud is the primary sponsor and funding provider for the *FastAPI and friends* open source projects.",
    ]
)
TABLES = "\n".join(
    [
        "你只需构建**一个 `engine` 对象**，让你的所有代码连接到同一个数据库。",
        "",
        "然后我们将与函数中相同的*表模型* `Hero` 原样返回。但是由于我们使用 `HeroPublic` *数据模型*声明了 "
        "`response_model`，**FastAPI** 会使用 `HeroPublic` 来验证和序列化数据。",
        "",
        "然后，我们来添加一个函数，使用 `SQLModel.metadata.create_all(engine)` 为所有*表模型***创建表**。",
    ]
)


def _first(question: str, text: str, weights=None) -> str:
    """The best-ranked line (quotes keep the page's order)."""
    return rank(question, [evidence_under(text, "page.md", [])], None, weights)[0].text


def test_an_irregular_participle_is_its_verb(monkeypatch):
    """c4012 "Who builds FastAPI Cloud?": "is built by …" was not "builds"; a line saying "building" came first."""
    weights = rare_weights({"build": 5.0})  # "build" rarer than the product's name in its own docs
    assert _first("Who builds FastAPI Cloud?", CLOUD, weights).startswith("**[FastAPI Cloud]")
    assert evidence_units.terms("It is built, written and sold") >= {"build", "write", "sell"}
    monkeypatch.setattr(evidence_units, "_IRREGULAR", {})  # control
    assert _first("Who builds FastAPI Cloud?", CLOUD, weights).startswith("It streamlines")


def test_the_docs_saying_and_how_long_frame_a_chinese_question():
    """z4018 "文档举例说可以创建有效期多长的 JWT 令牌？" was refused: no line says 文档, 举例 or 多长 (the answer
    line says 例如 and "1 周"). "ReDoc 文档" is still about the docs."""
    asked = question_terms.key_terms("文档举例说可以创建有效期多长的 JWT 令牌？")
    assert asked == {"创建", "有效期", "jwt", "令牌"}
    assert "文档" in question_terms.key_terms("ReDoc 文档在哪个地址？")


def test_a_function_is_named_as_a_call_on_a_class(monkeypatch):
    """x4021 "哪个函数会为所有表模型创建数据表？": `SQLModel.metadata.create_all(engine)` was no function name (a
    capital first, arguments), so lines naming `response_model` and `engine` were quoted first."""
    question = "哪个函数会为所有表模型创建数据表？"
    assert "SQLModel.metadata.create_all(engine)" in name_kinds.new_names(TABLES.split("\n")[-1], question, "函数")
    assert "create_all" in _first(question, TABLES)
    monkeypatch.setitem(name_kinds._SHAPES, "函数", re.compile(r"@?\.?[a-z_][\w.]*(?:\(\)|=\S+)?"))
    assert "create_all" not in _first(question, TABLES)  # control: the shape before


def test_every_answer_type_has_a_value_kind_for_refusals():
    """Stop 52 added a year type; the refusal's table of kinds lagged one behind and `value_missing` raised
    IndexError on "… born in what year?" (a held-out multi-hop run crashed on it)."""
    from kb_agent.agent import answer_types, coverage

    assert len(coverage._VALUE_KINDS) == len(answer_types.ANSWER_TYPES)
    passage = evidence_under("The soundtrack was produced by Trent Reznor.", "page.md", [])
    assert coverage.value_missing("The soundtrack was produced by a man born in what year?", [passage]) == "a year"
