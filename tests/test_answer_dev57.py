"""The misses of stop 62's baseline and held-out set (`fastapi_docs_dev57.jsonl`) that the answer step owns."""

from __future__ import annotations

import re

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import (
    answer_types,
    asked_shapes,
    definitions,
    example_lines,
    extractive,
    question_terms,
    quote_selection,
    reasons,
)
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.reasons import reason_beside

PUBLIC_URL = evidence_under(
    "But you can configure the **application server** to trust the *forwarded* headers sent by the **proxy**.\n\n"
    "This way the application would be able to know what is its own public URL, if it is using HTTPS, the domain, "
    "etc.\n\n"
    "This would be useful for example to properly handle redirects.",
    "en/docs/deployment/https.md",
    ["About HTTPS", "Proxy Forwarded Headers"],
    start=211,
)


def test_a_line_opening_this_way_states_what_the_way_gains_and_its_reason_may_follow(monkeypatch):
    """dev52 c5205 "Why is it useful for an app behind a proxy to know its own public URL?": "This way the
    application would be able to know … its own public URL" restates the question (its "this way" gives the line
    before as its cause); "This would be useful … to properly handle redirects" is the reason."""
    units = units_of(0, PUBLIC_URL)
    assert reasons.gives_cause(units[1].text)  # still a cause for the line before it, as ranked
    assert not reasons.states_own_cause(units[1].text)
    assert reason_beside(units[1], units) is units[2]
    question = "Why is it useful for an app behind a proxy to know its own public URL?"
    assert "redirects" in quoted_text(question, [PUBLIC_URL])
    monkeypatch.setattr(reasons, "states_own_cause", reasons.gives_cause)  # control: "this way" counts as own cause
    monkeypatch.setattr(quote_selection, "states_own_cause", reasons.gives_cause)
    # (nor is "This would be useful for …" read as a reason of its own, as it is since dev68)
    monkeypatch.setattr(reasons, "_USEFUL_WHEN", re.compile(r"(?!)"))
    assert reason_beside(units[1], units) is None
    assert "redirects" not in quoted_text(question, [PUBLIC_URL])


TRIO = evidence_under(
    "## 0.69.0 (2021-10-07)\n\n### Features\n\n"
    "* ✨ Add support for Trio via AnyIO, upgrading Starlette to `0.15.0`. PR [#3372](https://x) by [@g](x).",
    "en/docs/release-notes.md",
    ["Release Notes"],
    start=5745,
    title="Release Notes",
).model_copy(update={"untranslated": True})  # no Chinese page translates the release notes


def test_a_version_of_another_product_after_to_is_not_the_release_asked_of_a_chinese_question(monkeypatch):
    """dev57 x5701 "FastAPI 从哪个版本开始支持 Trio？" was answered with the note alone: its `0.15.0` (Starlette's,
    "upgrading Starlette to `0.15.0`") passed for FastAPI's release, so its heading was not read with it."""
    question = "FastAPI 从哪个版本开始支持 Trio？"
    assert not answer_types.states_each(answer_types.asked_types(question), TRIO.text.splitlines()[-1], question)
    weights = rare_weights({"trio": 5.0, "fastapi": 0.8, "支持": 3.0})
    assert "0.69.0" in " ".join(s.text for s in extractive_sentences(question, [TRIO], weights=weights))
    monkeypatch.setattr(answer_types, "_ASKED_OWNER", re.compile(r"\b(?i:which|what)\s+([A-Z][\w.-]*)\s+version\b"))
    assert answer_types.states_each(answer_types.asked_types(question), TRIO.text.splitlines()[-1], question)  # control


def test_asked_which_release_added_something_the_chinese_verb_of_adding_is_no_key_term(monkeypatch):
    """dev57 x5705 "FastAPI 在哪个版本加入了对 mypy --strict 的支持？" was refused over the note that answers: no
    English line says 加入 (the dictionary's "add" is too common to count)."""
    question = "FastAPI 在哪个版本加入了对 mypy --strict 的支持？"
    assert "加入" not in question_terms.key_terms(question)
    assert "加入" in question_terms.key_terms("加入依赖项以后会发生什么？")  # no release asked: a content word
    monkeypatch.setattr(question_terms, "_RELEASE_ADDED", re.compile(r"(?!x)x"))  # control
    assert "加入" in question_terms.key_terms(question)


def test_a_line_labelled_with_the_thing_asked_gives_its_value():
    """ "Which username …?": "Username: `johndoe`" gives it (dev57 t5706 asked a password, which masking hides)."""
    question = "Which username does the example log in with?"
    assert asked_shapes.labelled_value("Username: `johndoe`", question) == "johndoe"
    assert asked_shapes.labelled_value("Password: `secret`", question) is None  # labelled with another thing
    assert asked_shapes.labelled_value("Username: `johndoe`", "Which username is johndoe?") is None  # given


def test_asked_what_a_template_renders_under_a_condition_the_output_shown_answers():
    """dev57 t5709 "… what does Item ID: {{ id }} render when the ID is 42?": the line announcing what it renders
    is quoted with the output; an mkdocs include line ("{!…!}") is the page's build, not an answer."""
    assert example_lines.ASKS_OUTPUT.search(
        "In the templates guide, what does Item ID: {{ id }} render when the ID is 42?"
    )
    page = evidence_under(
        "{!../../docs_src/templates/templates/item.html!}\n\n"
        "For example, with an ID of `42`, this would render:\n\n```html\nItem ID: 42\n```",
        "en/docs/advanced/templates.md",
        ["Templates", "Template Context Values"],
        start=78,
    )
    assert next(u.text for u in units_of(0, page)).startswith("For example")
    assert "Item ID: 42" in quoted_text("What does Item ID: {{ id }} render when the ID is 42?", [page])


MANAGEMENT = evidence_under(
    "I, [@tiangolo](https://github.com/tiangolo), am the creator and owner of the FastAPI repository. 🤓\n\n"
    "I normally give the final review to each PR before merging them. I make the final decisions on the project, "
    "I'm the BDFL. 😅",
    "en/docs/management.md",
    ["Repository Management", "Owner"],
    start=7,
)


def test_asked_who_a_line_an_author_writes_as_i_comes_with_the_line_saying_who_i_is(monkeypatch):
    """dev57 x5706 "FastAPI 仓库的最终决定由谁做出？" was answered "I make the final decisions …" - by whom it does
    not say; the line before it in its section does ("I, @tiangolo, … am the creator and owner")."""
    units = units_of(0, MANAGEMENT)
    assert reasons.speaker(units[-1], units) is units[0]
    question = "Who makes the final decisions on the FastAPI project?"
    weights = rare_weights({"final": 4.0, "decis": 4.0, "project": 1.5, "fastapi": 0.8, "make": 1.5})
    said = " ".join(s.text for s in extractive_sentences(question, [MANAGEMENT], weights=weights))
    assert "tiangolo" in said and "final decisions" in said
    monkeypatch.setattr(quote_selection, "speaker", lambda unit, units: None)  # control
    said = " ".join(s.text for s in extractive_sentences(question, [MANAGEMENT], weights=weights))
    assert "tiangolo" not in said


STREAM_DATA = evidence_under(
    "You don't really need to declare the return type annotation for streaming binary data.",
    "en/docs/advanced/stream-data.md",
    ["Stream Data", "Type annotations"],
    start=37,
)
STREAM = evidence_under(
    '"**Streaming**" data means that your app will start sending data items to the client without waiting for the '
    "entire sequence of items to be ready.",
    "en/docs/tutorial/stream-json-lines.md",
    ["Stream JSON Lines", "What is a Stream?"],
    start=13,
)


def test_asked_what_something_means_the_line_saying_what_it_means_defines_it(monkeypatch):
    """dev57 c5702 "What does streaming data mean?" was answered with lines about streaming binary data; the line
    '"**Streaming**" data means that your app will start sending …' defines it."""
    assert definitions.defines(STREAM.text, {"stream"})
    question = "What does streaming data mean?"
    weights = rare_weights({"stream": 3.0, "data": 1.5, "mean": 2.0})
    assert "without waiting" in extractive_sentences(question, [STREAM_DATA, STREAM], weights=weights)[0].text
    monkeypatch.setattr(extractive, "_ASKS_WHAT_IS", re.compile(r"^\s*what(?:'s|\s+is|\s+are)\s"))  # control
    assert "without waiting" not in extractive_sentences(question, [STREAM_DATA, STREAM], weights=weights)[0].text


def test_a_cause_given_with_as_and_a_subject_of_a_few_words_is_a_reason_the_line_gives_itself():
    """dev52 c5204 "Why doesn't the application server trust the proxy's forwarded headers by default?": "as the
    **application server** doesn't know it is behind a trusted **proxy**" says why itself (once "This way, …" no longer
    did, a later line and its reason were quoted in its place)."""
    line = (
        "Nevertheless, as the **application server** doesn't know it is behind a trusted **proxy**, by default, it "
        "wouldn't trust those headers."
    )
    assert reasons.gives_cause(line)
    assert not reasons.gives_cause("The data is sent as the client reads it.")  # "as" of time: no verb it lists
    sources = [
        evidence_under(line, "en/docs/deployment/https.md", ["About HTTPS", "Proxy Forwarded Headers"], 209),
        PUBLIC_URL,
    ]
    said = quoted_text("Why doesn't the application server trust the proxy's forwarded headers by default?", sources)
    assert said.startswith("Nevertheless")
