"""Stop 70's second held-out set (`fastapi_docs_dev71.jsonl`): asked what OpenID Connect is based on, a line saying
the old OpenID "was not based on OAuth2" came first; "They work the same way …" after a list's introduction was
read without the list it names; "当然，这并不是最优的做法" was not read as pointing back past its "当然"."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, rare_weights
from kb_agent.agent import asked_shapes, extractive, quote_selection, reasons
from kb_agent.agent.evidence_units import terms
from kb_agent.agent.extractive import extractive_sentences

OLD_OPENID = evidence_under(
    '### OpenID (not "OpenID Connect")\n\n'
    'There was also an "OpenID" specification. That tried to solve the same thing as **OpenID Connect**, but was '
    "not based on OAuth2.",
    "en/docs/tutorial/security/index.md",
    ["Security", "OpenID Connect"],
    start=51,
)
OPENID_CONNECT = evidence_under(
    "## OpenID Connect\n\nOpenID Connect is another specification, based on **OAuth2**.",
    "en/docs/tutorial/security/index.md",
    ["Security"],
    start=41,
)  # a later passage of the search: ranked a little lower for that alone


def test_a_line_denying_the_asked_word():
    asked = terms("Which specification is OpenID Connect based on?")
    assert asked_shapes.denies_asked("… but was not based on OAuth2.", asked)
    assert not asked_shapes.denies_asked("OpenID Connect is another specification, based on **OAuth2**.", asked)
    assert asked_shapes.denies_asked("它不是基于 OAuth2。", {"基于"})
    assert not asked_shapes.denies_asked("不同于路径参数", {"路径"})  # 不同 ("different") denies no 路径


@pytest.mark.parametrize("rule", [True, False], ids=["denial_ranks_lower", "control_denial_unread"])
def test_asked_what_is_the_line_saying_what_is_not_comes_after(monkeypatch, rule):
    """dev71 t7105 "Which specification is OpenID Connect based on?" was answered by the old OpenID's line."""
    if not rule:
        monkeypatch.setattr(asked_shapes, "denies_asked", lambda text, asked: False)
    found = extractive_sentences(
        "Which specification is OpenID Connect based on?",
        [OLD_OPENID, OPENID_CONNECT],
        weights=rare_weights({"connect": 3.88, "specif": 2.74, "openid": 5.85, "base": 2.84}),
        max_sentences=1,
    )
    assert found[0].text.startswith("OpenID Connect is another specification") is rule


WEBSOCKET_DEPENDS = evidence_under(
    "## Using `Depends` and others\n\n"
    "In WebSocket endpoints you can import from `fastapi` and use:\n\n"
    "* `Depends`\n* `Security`\n* `Cookie`\n* `Header`\n* `Path`\n* `Query`\n\n"
    "They work the same way as for other FastAPI endpoints/*path operations*:\n\n"
    "/// note\n\n"
    "As this is a WebSocket it doesn't really make sense to raise an `HTTPException`, instead we raise a "
    "`WebSocketException`.\n\n"
    "///",
    "en/docs/advanced/websockets.md",
    ["WebSockets"],
    start=99,
)


@pytest.mark.parametrize("rule", [True, False], ids=["they_names_the_list", "control_list_unread"])
def test_they_after_a_list_names_its_items(monkeypatch, rule):
    """dev71 c7104 "Do Depends, Query and the others work the same way in WebSocket endpoints?" was answered by the
    list alone; "They work the same way …" is the answer, read with the list it names and quoted with it."""
    if not rule:
        monkeypatch.setattr(extractive, "listed_before", lambda unit, units, evidence: None)
        monkeypatch.setattr(quote_selection, "listed_before", lambda unit, units, evidence: None)
    found = extractive_sentences(
        "Do Depends, Query and the others work the same way in WebSocket endpoints?",
        [WEBSOCKET_DEPENDS],
        weights=rare_weights({"endpoint": 4.44, "depend": 1.85, "websocket": 3.64, "queri": 2.33, "same": 2.08}),
    )
    quoted = " ".join(s.text for s in found[:2])
    assert ("`Query`" in quoted and "They work the same way" in quoted) is rule
    if rule:
        assert quoted.index("`Query`") < quoted.index("They work the same way")


def test_a_pointing_word_after_an_aside_points_back():
    """dev71 x7101: "当然，这并不是最优的做法" is said of the long string the line before describes."""
    assert reasons.refers_back("当然，这并不是最优的做法，您不应该在生产环境中使用它。")
    assert reasons.refers_back("Of course, this is not optimal.")
    assert not reasons.refers_back("当然，你也可以使用 `Depends`。")


@pytest.mark.parametrize("rule", [True, False], ids=["set_aside_read", "control_denial_ranks_lower"])
def test_a_question_setting_something_aside_is_answered_by_the_line_denying_it(monkeypatch, rule):
    """From the full run: "Which encoder does FastAPI use … when no response model is declared?" opened with the
    second-best line, as "If you don't declare a response model, …" denies "declare"."""
    if not rule:
        monkeypatch.setattr(extractive, "_SETS_ASIDE", re.compile(r"(?!)"))
    passage = evidence_under(
        "If you don't declare a response model, FastAPI will use the `jsonable_encoder` and put it in a "
        "`JSONResponse`.\n\n"
        "When you declare a response model, **FastAPI** will use it to serialize the data to JSON, using Pydantic.",
        "en/docs/advanced/response-directly.md",
        ["Return a Response Directly"],
        start=20,
    )
    found = extractive_sentences(
        "Which encoder does FastAPI use on the data when no response model is declared?",
        [passage],
        weights=rare_weights({"encod": 3.0, "respons": 1.8, "model": 1.8, "declar": 2.2, "data": 1.5}),
        max_sentences=1,
    )
    assert found[0].text.startswith("If you don't declare a response model") is rule
