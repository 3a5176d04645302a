"""The misses of the held-out set dev60 (`fastapi_docs_dev60.jsonl`, written after stop 63's round) that the
answer step owns: a Chinese question's frame words, a list quoted twice."""

from __future__ import annotations

import re

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import question_terms, quote_selection, reasons
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.text import tokenize

SIMPLE_TYPES = evidence_under(
    "### 简单类型 { #simple-types }\n\n"
    "你不仅可以声明 `str`，还可以声明所有标准的 Python 类型。\n\n"
    "例如：\n\n"
    "* `int`\n* `float`\n* `bool`\n* `bytes`",
    "zh/docs/python-types.md",
    ["Python 类型提示简介"],
    start=125,
)


def test_what_a_chinese_question_says_a_page_lists_is_its_frame(monkeypatch):
    """dev60 z6001 "Python 类型简介中，除了 str 还列举了哪些简单类型？" was refused: no page writes 列举 ("lists"),
    which asks what the page lists, nor 除了 ("besides")."""
    question = "Python 类型简介中，除了 str 还列举了哪些简单类型？"
    assert not {"列举", "除了"} & question_terms.key_terms(question)
    assert {"列举", "除了"} <= tokenize.QUESTION_WORDS
    monkeypatch.setattr(question_terms, "QUESTION_TERMS", question_terms.QUESTION_TERMS - {"列举", "除了"})  # control
    assert {"列举", "除了"} <= question_terms.key_terms(question + " ")


def test_a_list_two_chosen_lines_introduce_is_quoted_once(monkeypatch):
    """z6001's answer then quoted the four types twice: with the line "例如：" follows, and with "例如：" itself."""
    question = "Python 类型简介中，除了 str 还列举了哪些简单类型？"
    answer = quoted_text(question, [SIMPLE_TYPES])
    assert answer.count("`bytes`") == 1 and "还可以声明所有标准的 Python 类型" in answer
    monkeypatch.setattr(  # control: each line rendered with its list
        quote_selection,
        "_listed_once",
        lambda chosen, sources: [(u, quote_selection._with_list(u, sources[u.source])) for u in chosen],
    )
    assert quoted_text(question, [SIMPLE_TYPES]).count("`bytes`") == 2


RUN_LOCALLY = evidence_under(
    "It is **HIGHLY encouraged** that you write or copy the code, edit it and run it locally.\n\n"
    "Using it in your editor is what really shows you the benefits of FastAPI, seeing how little code you have to "
    "write, all the type checks, autocompletion, etc.",
    "en/docs/tutorial/index.md",
    ["Tutorial - User Guide", "Run the code"],
    start=55,
)


def test_the_line_naming_what_a_practice_shows_you_is_its_reason(monkeypatch):
    """dev60 c6001 "Why does the tutorial highly encourage you to … run it locally?" quoted the line restating the
    question alone; the next one says what doing so "really shows you"."""
    question = "Why does the tutorial highly encourage you to write or copy the code and run it locally?"
    weights = rare_weights({"encourag": 6.0, "local": 5.0, "highli": 4.0, "copi": 4.0, "write": 1.0, "code": 1.0})

    def quoted() -> str:
        return " ".join(s.text for s in extractive_sentences(question, [RUN_LOCALLY], weights=weights))

    assert "little code" in quoted()
    monkeypatch.setattr(reasons, "_SHOWS_GAIN", re.compile(r"(?!)"))  # control
    assert "little code" not in quoted()
