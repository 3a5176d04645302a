"""The misses of the held-out set `fastapi_docs_dev41.jsonl` (stop 53), each with a control that turns its
change off."""

from __future__ import annotations

from tests.conftest import evidence_under

from kb_agent.agent import coverage, question_terms
from kb_agent.agent.extractive import rank
from kb_agent.agent.name_kinds import new_names
from kb_agent.agent.question_terms import key_terms
from kb_agent.text.tokenize import zh_tag

GUIDE = evidence_under(
    "In this guide, you'll learn how to generate a **TypeScript SDK** for your FastAPI backend.\n\n"
    "Once we have a FastAPI app with the models, we can use Hey API to generate a TypeScript client.",
    "generate-clients.md",
    ["Generating SDKs"],
)


def test_the_documents_as_the_sayer_are_no_key_term(monkeypatch):
    """ "Which tool does the guide use …?": "guide" (rare in the pages) made the intro line "In this guide, you'll
    learn …" outrank the line naming the tool; "文档用的是" likewise."""
    assert "guid" not in key_terms("Which tool does the guide use to generate a TypeScript client?")
    assert "文档" not in key_terms("生成 TypeScript 客户端时文档用的是哪个工具？")
    question = "Which tool does the guide use to generate a TypeScript client?"
    assert "Hey API" in rank(question, [GUIDE])[0].text
    monkeypatch.setattr(question_terms, "_DOCS_SUBJECT", question_terms.re.compile(r"$^"))  # control
    # (and "the guide" not read as pointing to a page, whose word it drops too: a second guard)
    monkeypatch.setattr(question_terms, "_PAGE_POINTER", question_terms.re.compile(r"$^"))
    # (whether the intro line then outranks the tool's line depends on the other lines' weights: in a full test
    # run it did not, alone it did - the rule's own effect is the key term)
    assert "guid" in key_terms(question)


def test_a_tool_is_named_in_words_mid_sentence():
    line = "Once we have a FastAPI app with the models, we can use Hey API to generate a TypeScript client."
    assert "Hey API" in new_names(line, "Which tool does the guide use?", "tool")
    assert "Hey API" not in new_names(line, "Which parameter does the guide use?", "parameter")  # not a product kind


def test_a_chinese_state_word_or_negated_adjective_is_the_askers_wording(monkeypatch):
    """ "…方法名为什么像 createItemItemsPost 这样不整洁？": the page says 不太简洁; 不整洁 (a state word) refused it."""
    question = "生成的客户端方法名为什么像 createItemItemsPost 这样不整洁？"
    page = evidence_under(
        "现在，像 `createItemItemsPost` 这样的生成方法名看起来不太简洁：\n\n这是因为客户端生成器会使用操作 ID。",
        "zh/generate-clients.md",
        [],
    )
    assert zh_tag("不整洁") == "z"
    unknown = {"不整洁"}
    monkeypatch.setattr(coverage, "holds_the_rest", lambda q, unheard, sources: True)  # the page holds the rest
    assert coverage.still_unknown(question, unknown, [page]) == set()
    monkeypatch.setattr(coverage, "_wording", lambda term: False)  # control: every Chinese word a thing
    assert coverage.still_unknown(question, unknown, [page]) == unknown
