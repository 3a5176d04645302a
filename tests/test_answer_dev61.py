"""The misses of the held-out set dev61 (`fastapi_docs_dev61.jsonl`, committed before its first run) that the answer
step owns, and dev60's nested list: numbers a question asks for in words of a count, a unit or a length of time;
purposes that answer why; restatements that add only the subject's name; a release given to "this feature"."""

from __future__ import annotations

import re

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import answer_types, claim_guards, evidence_following, extractive, reasons
from kb_agent.agent.claims import ClaimChecker
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.question_terms import key_terms
from kb_agent.agent.sentences import Sentence


def test_the_maximum_number_of_a_thing_is_a_count_of_that_thing(monkeypatch):
    """dev61 u6101 "What is the maximum number of workers that fastapi run --workers accepts?" was answered with
    "… handled by one of the multiple replicated containers": "one" and "could" passed as a bound."""
    question = "What is the maximum number of workers that fastapi run --workers accepts?"
    line = "So, each request could be handled by one of the multiple **replicated containers** running your app."
    types = answer_types.asked_types(question)
    assert not answer_types.states_each(types, line, question)
    assert answer_types.states_each(types, "You can run at most 64 workers with `--workers`.", question)
    monkeypatch.setattr(answer_types, "_COUNTED", re.compile(r"(?!)()()"))  # control: no counted thing read
    monkeypatch.setattr(answer_types, "_ARTICLE", re.compile(r"(?!)"))  # nor "could … one" read as no bound (dev70)
    answer_types._counted.cache_clear()
    assert answer_types.states_each(types, line, question + " ")


def test_seconds_asked_in_chinese_are_a_length_of_time(monkeypatch):
    """dev61 u6103 "FastAPI 的静态文件默认缓存多少秒？" was answered "…第一步是关闭自动文档…": 第一 passed as a
    number."""
    question = "FastAPI 的静态文件默认缓存多少秒？"
    line = "和使用自定义 CDN 一样，第一步是关闭自动文档，因为默认情况下它们会使用 CDN。"
    types = answer_types.asked_types(question)
    assert not answer_types.states_each(types, line, question)
    assert answer_types.states_each(types, "静态文件默认缓存 60 秒。", question)
    monkeypatch.setattr(answer_types, "_ASKS_DURATION", re.compile(r"多久"))  # control
    assert answer_types.states_each(types, line, question)


def test_a_size_asked_in_bytes_is_a_number_of_bytes(monkeypatch):
    """dev61 u6104 "What chunk size in bytes does the stream data guide recommend …?" was answered with the line
    saying one streams each chunk: "in bytes" asked no number."""
    question = "What chunk size in bytes does the stream data guide recommend for large files?"
    line = "You could also use it to stream **large binary files**, where you stream each chunk of data as you read it."
    assert answer_types.asked_types(question) == [1]
    assert not answer_types.states_each([1], line, question)
    assert not answer_types.states_each([1], "Read it in 4 chunks.", question)  # a number, but of no bytes
    assert answer_types.states_each([1], "Read it in chunks of 65536 bytes.", question)
    asks, shape = answer_types.ANSWER_TYPES[1]
    control = [*answer_types.ANSWER_TYPES]  # control: "in bytes" asks nothing
    control[1] = (re.compile(asks.pattern.replace(r"|\bin (?:bytes", r"|\bin (?:xx"), re.I), shape)
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", control)
    assert answer_types.asked_types(question) == []


def test_how_long_something_is_held_is_answered_by_until_what(monkeypatch):
    """dev61 c6106: asked how long the database session would be held, "… held until the response is finished
    being sent" states no number, yet it answers."""
    question = "How long would the database session be held with a dependency with yield?"
    line = "In this case, the database session would be held until the response is finished being sent."
    assert answer_types.states_each([1], line, question)
    assert not answer_types.states_each([1], line, "How long does it take to hold the session?")  # a duration
    monkeypatch.setattr(answer_types, "_UNTIL", re.compile(r"(?!)"))  # control
    assert not answer_types.states_each([1], line, question)


CMD_FORMS = evidence_under(
    "The [`CMD`](https://docs.docker.com/reference/dockerfile/#cmd) Docker instruction can be written using two "
    "forms:\n\n"
    "✅ **Exec** form:\n\n"
    "⛔️ **Shell** form:\n\n"
    "Make sure to always use the **exec** form to ensure that FastAPI can shutdown gracefully and "
    "[lifespan events](../advanced/events.md) are triggered.",
    "en/docs/deployment/docker.md",
    ["FastAPI in Containers - Docker", "Use `CMD` - Exec Form"],
    start=237,
)


def test_a_purpose_to_ensure_something_answers_why(monkeypatch):
    """dev61 c6102 "Why should you always use the exec form of the CMD instruction …?" quoted the line saying CMD has
    two forms; the reason is "… to ensure that FastAPI can shutdown gracefully …" (and c6108's "we make sure that
    the file-like object is closed")."""
    question = "Why should you always use the exec form of the CMD instruction in a Dockerfile?"
    weights = rare_weights({"exec": 6.0, "cmd": 5.0, "instruct": 4.0, "dockerfil": 4.0, "form": 3.0, "alwai": 2.0})

    def best() -> str:
        return extractive.rank(question, [CMD_FORMS], weights=weights)[0].text

    assert "gracefully" in best()
    assert reasons.gives_cause("By using a `with` block, we make sure that the file-like object is closed.")
    assert not reasons.gives_cause("Make sure that you have the exec form.")  # an order, no purpose
    # what one has to do is no purpose either (dev29 c2902 then lost the reason beside it)
    assert not reasons.gives_cause("And you will have to make sure that it's a single process running those steps")
    monkeypatch.setattr(reasons, "_CAUSE", re.compile(r"\bbecause\b"))  # control
    assert "gracefully" not in best()


def test_a_chinese_the_reason_why_is_a_frame_word():
    """dev61 z6102 "带 yield 的依赖项之所以能工作，…" had 之所以 ("the reason why") as a key term no page writes."""
    assert "之所以" not in key_terms("带 yield 的依赖项之所以能工作，是借助了 Python 的什么特性？")


QUERY_MODELS = evidence_under(
    "# 查询参数模型 { #query-parameter-models }\n\n"
    "## 使用 Pydantic 模型的查询参数 { #query-parameters-with-a-pydantic-model }\n\n"
    "在一个 **Pydantic 模型**中声明你需要的**查询参数**，然后将参数声明为 `Query`：\n\n"
    "## 总结 { #summary }\n\n"
    "你可以使用 **Pydantic 模型**在 **FastAPI** 中声明**查询参数**。😎",
    "zh/docs/tutorial/query-param-models.md",
    ["查询参数模型"],
    start=13,
)


def test_a_line_adding_only_the_subject_and_you_can_use_restates_the_question(monkeypatch):
    """dev61 z6105 "如何用 Pydantic 模型声明查询参数？" quoted the recap "你可以使用 Pydantic 模型在 FastAPI 中声明查询
    参数" first: "FastAPI" (the knowledge base's subject) and 可以使用 ("you can use") are all it adds."""
    question = "如何用 Pydantic 模型声明查询参数？"
    weights = rare_weights({"fastapi": 0.5, "fast": 0.5, "api": 0.5, "pydantic": 3.0, "查询": 3.0, "声明": 3.0})

    def best() -> str:
        return extractive.rank(question, [QUERY_MODELS], weights=weights)[0].text

    assert "`Query`" in best()
    monkeypatch.setattr(extractive, "_MEANS_WORDS", frozenset())  # control
    assert "`Query`" not in best()


TYPE_HINTS = evidence_under(
    "## Type hints in **FastAPI** { #type-hints-in-fastapi }\n\n"
    "...and **FastAPI** uses the same declarations to:\n\n"
    "* **Convert data**: from the request to the required type.\n"
    "* **Validate data**: coming from each request:\n"
    "    * Generating **automatic errors** returned to the client when the data is invalid.\n"
    "* **Document** the API using OpenAPI:\n"
    "    * which is then used by the automatic interactive documentation user interfaces.",
    "en/docs/python-types.md",
    ["Python Types Intro"],
    start=329,
)


def test_a_list_with_a_few_sub_items_is_quoted_with_them(monkeypatch):
    """dev60 c6002 and z6005 "What does FastAPI do with the same type hint declarations …?": the line introducing
    the list was quoted alone, its list having sub-items. An item's few sub-items are quoted under it, and the quote
    is cited to the lines of the list."""
    intro = units_of(0, TYPE_HINTS)[0]
    items = evidence_following.list_after(intro, TYPE_HINTS)
    assert len(items) == 3 and items[1].endswith("request:\n  - Generating **automatic errors** returned to the client "
                                                 "when the data is invalid.")  # fmt: skip
    question = "What does FastAPI do with the same type hint declarations?"
    sentence = extractive_sentences(question, [TYPE_HINTS], max_sentences=1)[0]
    checked = ClaimChecker([TYPE_HINTS], question).check(Sentence(sentence.text, [1]))
    assert "  - Generating" in sentence.text and checked.supported
    assert [(start, end) for _, start, end in checked.spans] == [(331, 337)]
    # a list of lists deeper than one level, or with more sub-items, is no list one line introduces
    deep = evidence_under("It can do:\n\n* A:\n    * B\n        * C\n* D", "t.md")
    many = evidence_under("It can do:\n\n* A:\n    * B\n    * C\n    * E\n* D", "t.md")
    assert evidence_following.list_after(units_of(0, deep)[0], deep) == []
    assert evidence_following.list_after(units_of(0, many)[0], many) == []
    monkeypatch.setattr(evidence_following, "SUB_ITEMS", 0)  # control
    assert evidence_following.list_after(intro, TYPE_HINTS) == []
    assert "\n  - " not in quoted_text(question, [TYPE_HINTS])


QUERY_NOTE = evidence_under(
    "# 查询参数模型\n\n"
    "如果你有一组具有相关性的**查询参数**，你可以创建一个 **Pydantic 模型**来声明它们。\n\n"
    "这将允许你在**多个地方**去**复用模型**，并且一次性为所有参数声明验证和元数据。😎\n\n"
    "/// note | 注意\n\n"
    "FastAPI 从 `0.115.0` 版本开始支持这个特性。🤓\n\n"
    "///",
    "zh/docs/tutorial/query-param-models.md",
    ["查询参数模型"],
)


def test_a_release_given_to_this_feature_is_the_one_asked_for_only_where_its_lines_name_it(monkeypatch):
    """dev61 x6105 "哪个版本给所有安全方案类都加上了 description 参数？", with the model: "FastAPI 从 0.115.0 版本开始
    支持这个特性", cited to the query parameter models page's note, was kept (the line says it word for word)."""
    sentence = Sentence("FastAPI 从 `0.115.0` 版本开始支持这个特性。", [1])
    other = "哪个版本给所有安全方案类都加上了 description 参数？"
    assert not ClaimChecker([QUERY_NOTE], other).check(sentence).supported
    assert ClaimChecker([QUERY_NOTE], "查询参数模型从哪个版本开始支持？").check(sentence).supported
    monkeypatch.setattr(claim_guards, "_THIS_FEATURE", re.compile(r"(?!)"))  # control
    assert ClaimChecker([QUERY_NOTE], other).check(sentence).supported


STARLETTE_RELEASE = evidence_under(
    "## 0.87.0 (2022-11-13)\n\n"
    "### Features\n\n"
    "* ✨ Re-export Starlette's `WebSocketException` and add it to docs. PR [#5629](https://x) by [@t](https://x).\n"
    "* ⬆ Upgrade Starlette to `0.21.0`, including the new `TestClient` based on HTTPX. PR [#5471](https://x).",
    "en/docs/release-notes.md",
    ["Release Notes"],
    start=4916,
    title="Release Notes",
)


def test_a_version_of_the_product_owning_what_is_asked_about_is_not_the_release_asked(monkeypatch):
    """dev62 x6205 "哪个版本重新导出了 Starlette 的 WebSocketException？" (after its held-out run) was answered "Upgrade
    Starlette to `0.21.0`": Starlette owns the exception; the release asked is the one whose notes re-export it."""
    question = "Which version re-exported Starlette's WebSocketException?"
    line = "⬆ Upgrade Starlette to `0.21.0`, including the new `TestClient` based on HTTPX."
    assert not answer_types.states_each([answer_types.VERSION], line, question)
    weights = rare_weights({"websocketexception": 6.0, "re-exported": 4.0, "starlett": 2.0})
    quoted = " ".join(s.text for s in extractive_sentences(question, [STARLETTE_RELEASE], weights=weights))
    assert "0.87.0" in quoted and "0.21.0" not in quoted
    monkeypatch.setattr(answer_types, "_POSSESSOR", re.compile(r"(?!)"))  # control
    assert answer_types.states_each([answer_types.VERSION], line, question)
