"""The misses of stop 59's second held-out set (`fastapi_docs_dev52.jsonl`) that the answer step owns."""

from __future__ import annotations

import re

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import answer_types, name_kinds, question_terms, reasons


def _best(question: str, passage, rare: dict[str, float] | None = None) -> str:
    from kb_agent.agent.extractive import rank

    return rank(question, [passage], None, rare_weights(rare) if rare else None)[0].text


CLIENTS_ZH = evidence_under(
    "这让你可以轻松生成最新的**文档**、多语言的客户端库（**SDKs**），以及与代码保持同步的**测试**或**自动化工作流**。\n\n"
    "本指南将带你为 FastAPI 后端生成一个 **TypeScript SDK**。",
    "zh/docs/advanced/generate-clients.md",
    ["生成 SDK"],
    start=5,
)


def test_asked_which_language_the_line_naming_one_answers(monkeypatch):
    """z5203 "生成客户端的指南里生成的是哪种语言的 SDK？" was answered with "多语言的客户端库": it says 语言, the line
    naming TypeScript does not."""
    question = "生成客户端的指南里生成的是哪种语言的 SDK？"
    assert name_kinds.asked_kind(question) == "语言" and name_kinds.asked_kind("Which language is the SDK in?")
    assert name_kinds.says_kind("生成一个 **TypeScript SDK**。", "语言", question)
    assert "TypeScript" in _best(question, CLIENTS_ZH)
    monkeypatch.setattr(name_kinds, "names_a_language", lambda text, question: False)  # control
    assert "TypeScript" not in _best(question, CLIENTS_ZH)


CERTIFICATES = evidence_under(
    "Using the **SNI extension** discussed above, the TLS Termination Proxy would check which of the TLS (HTTPS) "
    "certificates available it should use for this connection, using the one that matches the domain expected by "
    "the client.\n\nIn this case, it would use the certificate for `someapp.example.com`.",
    "en/docs/deployment/https.md",
    ["About HTTPS", "TLS Handshake Start"],
    start=110,
)


def test_asked_which_domain_a_line_naming_one_answers(monkeypatch):
    """t5210 "For which domain does the TLS Termination Proxy use the certificate …?" quoted the line about "the
    domain expected by the client", which names none."""
    question = "For which domain does the TLS Termination Proxy use the certificate in the HTTPS example?"
    assert "someapp.example.com" in quoted_text(question, [CERTIFICATES])
    assert not answer_types.states_each(
        answer_types.asked_types(question), "the domain expected by the client", question
    )
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", [(re.compile(r"(?!)"), s) for _, s in answer_types.ANSWER_TYPES])
    assert answer_types.asked_types(question) == []  # control: no address asked, any line about domains answers


INCLUDE_ZH = evidence_under(
    "你还可以使用*路径操作装饰器*的 `response_model_include` 和 `response_model_exclude` 参数。\n\n"
    "它们接收一个由属性名 `str` 组成的 `set`，用于包含（忽略其他）或排除（包含其他）这些属性。",
    "zh/docs/tutorial/response-model.md",
    ["响应模型"],
    start=308,
)


def test_a_line_opening_they_speaks_of_the_things_of_the_line_before(monkeypatch):
    """z5202 "response_model_include 和 response_model_exclude 接收什么类型的值？": "它们接收一个 … `set`" never
    names the two parameters; the line before, which names them and answers nothing, was quoted."""
    question = "response_model_include 和 response_model_exclude 接收什么类型的值？"
    assert reasons.refers_back("They take a `set` of `str`.") and reasons.refers_back("它们接收一个 `set`。")
    assert "`set`" in _best(question, INCLUDE_ZH)
    monkeypatch.setattr(reasons, "_REFERS_BACK", re.compile(r"^(?:这|那|此)"))  # control
    assert "`set`" not in _best(question, INCLUDE_ZH)


def test_a_point_of_view_is_the_questions_angle_not_its_topic():
    """f5201 "Which page explains how HTTPS works from a developer's point of view?" listed the page saying
    "point of view" above the HTTPS page (which says "from a developer's perspective")."""
    assert {"point", "view"}.isdisjoint(
        question_terms.key_terms("How does HTTPS work from a developer's point of view?")
    )
    assert "view" in question_terms.key_terms("How do I add a view to the page?")


UPLOADS = evidence_under(
    "It's possible to upload several files at the same time.\n\n"
    'They would be associated to the same "form field" sent using "form data".\n\n'
    "To use that, declare a list of `bytes` or `UploadFile`:",
    "en/docs/tutorial/request-files.md",
    ["Request Files", "Multiple File Uploads"],
    start=150,
)


def test_to_use_that_points_back_along_a_chain(monkeypatch):
    """dev35 t3506 "What do I declare to receive several uploaded files in one form field?": once "They would be …"
    read the line before, it outranked "To use that, declare a list of …", which points back too."""
    question = "What do I declare to receive several uploaded files in one form field?"
    assert "declare a list" in _best(question, UPLOADS)
    monkeypatch.setattr(reasons, "_REFERS_BACK", re.compile(r"^(?:they)\b", re.I))  # control: "To use that" not read
    assert "declare a list" not in _best(question, UPLOADS)
