"""dev31 and dev32 misses (stop 48): a word the question writes on its own is a key term though an identifier it also
writes contains it; a line giving the gain ("without having to …") answers why."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under
from kb_agent.agent import extractive, reasons
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.question_terms import key_terms

_evidence = evidence_under


def _weights(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


STREAM_QUESTION = "Why stream a large binary file with StreamingResponse instead of returning it whole?"


def test_a_word_written_apart_from_the_identifier_holding_it_is_a_key_term():
    """dev31 c3101: "stream" was dropped as a part of `StreamingResponse`; the question writes it on its own."""
    assert "stream" in key_terms(STREAM_QUESTION)
    assert "streamingresponse" in key_terms(STREAM_QUESTION)
    # an identifier alone still counts once: its parts are no terms of their own
    assert key_terms("What is the default of max_age?") == {"default", "max_age"}


USE_CASES = "\n\n".join(
    [
        "You could use this if you want to stream pure strings, for example directly from the output of an AI service.",
        "You could also use it to stream **large binary files**, where you stream each chunk of data as you read it, "
        "without having to read it all into memory at once.",
    ]
)
CANCELLATION = "\n\n".join(
    [
        "Takes an async generator or a normal generator/iterator (a function with `yield`) and streams the response "
        "body.",
        "An `async` task can only be cancelled when it reaches an `await`. If there is no `await`, the generator "
        "can not be cancelled properly.",
        "Since this small example does not need any `await` statements, we add an `await anyio.sleep(0)` to give "
        "the event loop a chance to handle cancellation.",
        "This would be even more important with large or infinite streams.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["gain_is_a_reason", "control_only_because_since"])
def test_a_line_giving_the_gain_answers_why(monkeypatch, rule):
    """dev31 c3101 was answered by "Since this small example does not need any `await` …" ("since" read as a
    cause) over the use case that says what streaming saves: reading it all into memory."""
    if not rule:
        old = reasons._CAUSE.pattern.replace(r"|,\s*without (?:having|needing) to\b", "")
        monkeypatch.setattr(reasons, "_CAUSE", re.compile(old, re.I))
        monkeypatch.setattr(extractive, "gives_cause", reasons.gives_cause)
    sources = [
        _evidence(CANCELLATION, "advanced/custom-response.md", ["Custom Response", "`StreamingResponse`"]),
        _evidence(USE_CASES, "advanced/stream-data.md", ["Stream Data", "Use Cases"]),
    ]
    found = extractive_sentences(STREAM_QUESTION, sources, weights=_rare_class, max_sentences=1)
    assert ("memory" in found[0].text) is rule
    # a way done without something is no reason (dev15 c1503 lost its answer to this line)
    assert not reasons.gives_cause("We can declare all that without having to modify the original `APIRouter`.")


def _rare_class(asked: set[str]) -> dict[str, float]:
    """The store's weights, roughly: the class name is written on few pages, "whole" and "return" on most."""
    return {t: {"streamingresponse": 4.0, "whole": 1.0, "return": 1.0}.get(t, 2.0) for t in asked}


SERVERS = "\n".join(
    [
        "The docs UI would also need the OpenAPI schema to declare that this API `server` is located at `/api/v1` "
        "(behind the proxy). For example:",
        "",
        '```JSON hl_lines="4-8"',
        "{",
        '    "openapi": "3.1.0",',
        "    // More stuff here",
        '    "servers": [',
        "        {",
        '            "url": "/api/v1"',
        "        }",
        "    ],",
        '    "paths": {',
        "    }",
        "}",
        "```",
    ]
)
OPENAPI_JSON = "\n".join(
    [
        "它将显示以如下内容开头的 JSON：",
        "",
        "```JSON",
        "{",
        '    "openapi": "3.1.0",',
        '    "info": {',
        '        "title": "FastAPI",',
        '        "version": "0.1.0"',
        "    },",
        "```",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["example_line_quoted", "control_the_introduction_alone"])
def test_a_line_introducing_an_example_is_quoted_with_the_line_that_answers(monkeypatch, rule):
    """dev31 t3110 "Under which key does the OpenAPI schema declare …?" was answered "… For example:" and no key;
    dev29 z2906 "openapi.json 开头显示的 openapi 版本号是多少？" was refused: the version is in the example. The
    fence's highlighted lines are what the example shows ("servers", not "openapi")."""
    if not rule:
        monkeypatch.setattr(extractive, "answering_line", lambda *args: "")
    key = "Under which key does the OpenAPI schema declare that the API server is located at /api/v1?"
    found = extractive_sentences(key, [_evidence(SERVERS, "behind-a-proxy.md", ["Behind a Proxy"], 147)], _weights)
    assert bool(found) and ('"servers": [' in found[0].text) is rule
    assert '"openapi"' not in found[0].text
    version = "openapi.json 开头显示的 openapi 版本号是多少？"
    found = extractive_sentences(
        version, [_evidence(OPENAPI_JSON, "first-steps.md", ["查看 openapi.json"], 122)], _weights
    )
    # without it, at best the bare code line: nothing says what it is the start of
    assert bool(found) and ("开头的 JSON" in found[0].text and "3.1.0" in found[0].text) is rule


def test_a_version_number_asked_is_a_version_not_another_number():
    from kb_agent.agent import answer_types

    assert answer_types.asked_types("openapi.json 开头显示的 openapi 版本号是多少？") == [0]
    assert answer_types.asked_types("How many workers does the example start?") == [1]


def test_a_chinese_placeholder_for_what_the_documents_name_is_no_key_term():
    """dev32 z3205 “服务器”这个词通常可以指哪两种东西？ cited a line on HTTPS: 东西 ("things") weighed as a rare
    word no line beside the answer writes, as "thing" would have in English."""
    assert "东西" not in key_terms("“服务器”这个词通常可以指哪两种东西？")
    assert "服务器" in key_terms("“服务器”这个词通常可以指哪两种东西？")


def test_how_many_of_a_thing_is_answered_by_a_line_counting_that_thing():
    """dev12 u1201 (How many worker threads does FastAPI's threadpool start with by default?, which the docs never
    say) was answered "And if you start **4 processes** (4 workers) …" once more passages were read: it counts
    processes, not threads."""
    from kb_agent.agent import answer_types

    line = "And if you start **4 processes** (4 workers), each will consume 1 GB of RAM."
    threads = "How many worker threads does FastAPI's threadpool start with by default?"
    assert not answer_types.states_each(answer_types.asked_types(threads), line, threads)
    workers = "How many workers does the example start?"  # control: the line counts workers
    assert answer_types.states_each(answer_types.asked_types(workers), line, workers)


@pytest.mark.parametrize("rule", [True, False], ids=["changelog_holds_no_name", "control_any_line_holds_it"])
def test_a_name_only_a_changelog_entry_holds_is_missing_for_a_how_to_question(monkeypatch, rule):
    """dev7 u710 (Which OpenTelemetry exporter does FastAPI configure by default? — not in the docs) was refused as
    "no passage found names OpenTelemetry" until more passages were read: a release note's "Add External Link:
    … tracing with OpenTelemetry … PR [#9440]" held the name, and the model called `fastapi-cloud-cli` the exporter."""
    from kb_agent.agent import coverage

    if not rule:
        monkeypatch.setattr(coverage, "without_changelog", lambda text, question: text)
    note = (
        "* 📝 Add External Link: Instrument a FastAPI service adding tracing with OpenTelemetry. "
        "PR [#9440](https://github.com/tiangolo/fastapi/pull/9440) by [@someone](https://github.com/someone)."
    )
    sources = [
        _evidence("FastAPI includes `fastapi-cloud-cli` to deploy to FastAPI Cloud.", "index.md", ["FastAPI"]),
        _evidence(note, "release-notes.md", ["Release Notes"]),
    ]
    question = "Which OpenTelemetry exporter does FastAPI configure by default?"
    assert (coverage.missing_name(question, sources, _weights) == "OpenTelemetry") is rule
    # asked about history, the entry holds its names
    assert coverage.missing_name("When was the OpenTelemetry link added?", sources, _weights) is None
