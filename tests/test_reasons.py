"""Why-questions without a model: the line that matches best restates the question; the reason beside it,
tied by a pointing word, is quoted with it."""

from __future__ import annotations

import re

import pytest

from kb_agent.agent import definitions, extractive, quote_selection, reasons
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.reasons import asks_why, reason_beside
from kb_agent.tools.base import Evidence


def _evidence(text: str, path: str = "page.md") -> Evidence:
    lines = text.split("\n")
    return Evidence(source=path, path=path, start_line=1, end_line=len(lines), text=text)


STRICT = _evidence(
    "# Strict Content-Type Checking\n"
    "By default, the framework requires a valid Content-Type header on JSON request bodies.\n\n"
    "## CSRF Risk\n"
    "This default behavior provides protection against a class of Cross-Site Request Forgery attacks.\n\n"
    "Browsers send such requests without any preflight check."
)
CERTIFICATES = _evidence(
    "# About HTTPS\n"
    "* The certificates certify a domain, but the encryption happens at the TCP level, before knowing the domain.\n"
    "* By default, that would mean that you can only have one HTTPS certificate per IP address.\n"
    "* There is a solution to this, however."
)


def test_the_reason_is_the_next_line_that_points_back_or_the_line_before_a_that_would_mean():
    units = units_of(0, STRICT)
    assert reason_beside(units[0], units) is units[1]
    units = units_of(0, CERTIFICATES)
    assert reason_beside(units[1], units) is units[0]


@pytest.mark.parametrize(
    "text",
    [
        "Use it because comparing strings with == leaks timing information.\nThis keeps the secret safe.",
        "You could compare the values directly.\nThis would be similar to:",  # an example follows, no reason
        "You could compare the values directly.\nNothing ties this line to the one before.",
    ],
)
def test_no_reason_is_added_where_the_line_gives_its_own_or_nothing_points_back(text):
    units = units_of(0, _evidence(text))
    assert reason_beside(units[0], units) is None


def test_only_why_questions_ask_for_a_reason():
    assert asks_why("Why does FastAPI require a Content-Type header?") and asks_why("为什么需要 Content-Type 头？")
    assert not asks_why("Which header does FastAPI require?")


@pytest.mark.parametrize("why", [True, False], ids=["reason_quoted", "control_no_reason_rule"])
def test_a_why_question_is_answered_with_the_reason_beside_the_restating_line(monkeypatch, why):
    if not why:
        monkeypatch.setattr(extractive, "asks_why", lambda question: False)
        monkeypatch.setattr(quote_selection, "asks_why", lambda question: False)
    question = "Why does the framework require a Content-Type header on JSON request bodies by default?"
    quoted = " ".join(s.text for s in extractive_sentences(question, [STRICT]))
    assert "requires a valid Content-Type header" in quoted
    assert ("Cross-Site Request Forgery" in quoted) is why


BASIC_AUTH = _evidence(
    "# HTTP Basic Auth\n"
    "If it does not receive it, it returns an HTTP 401 error.\n\n"
    "And returns a header `WWW-Authenticate` with a value of `Basic`.\n\n"
    "That tells the browser to show the integrated prompt for a username and password.\n\n"
    "## Simple HTTP Basic Auth\n"
    "Import `HTTPBasic` and `HTTPBasicCredentials`."
)


def test_a_line_that_opens_by_pointing_back_refers_to_the_line_before_it_in_its_section():
    units = units_of(0, BASIC_AUTH)
    assert reasons.antecedent(units[2], units) is units[1]  # "That tells …" <- the header line
    assert reasons.antecedent(units[1], units) is None  # "And returns …" points nowhere
    assert reasons.antecedent(units[3], units) is None  # first line of its section


@pytest.mark.parametrize("rule", [True, False], ids=["antecedent_quoted", "control_no_antecedent_rule"])
def test_the_best_line_comes_with_the_line_it_points_back_to(monkeypatch, rule):
    if not rule:
        monkeypatch.setattr(quote_selection, "antecedent", lambda unit, units: None)
    question = "What tells the browser to show the prompt for a username and password?"
    answer = " ".join(s.text for s in extractive_sentences(question, [BASIC_AUTH], max_sentences=2))
    assert answer.startswith("That tells the browser") != rule
    assert ("WWW-Authenticate" in answer) == rule


def test_asked_for_one_line_the_best_line_still_comes_with_its_antecedent():
    """The multi-step chain asks for the single best line; one that points back used to be dropped for not
    fitting in one line with its antecedent, and that answer came back empty."""
    question = "What tells the browser to show the prompt for a username and password?"
    sentences = extractive_sentences(question, [BASIC_AUTH], max_sentences=1)
    assert [s.text[:22] for s in sentences][-1] == "That tells the browser"
    assert len(sentences) == 2 and "WWW-Authenticate" in sentences[0].text  # the pair, past the limit of one


CACHE = _evidence(
    "# Cache keys\n"
    "Sometimes a response must be stored under a key that survives a restart.\n\n"
    "For example, when several workers share one cache.\n\n"
    "For that, the library provides a `stable_key()` helper."
)


@pytest.mark.parametrize("skip", [True, False], ids=["statement", "control_example_line"])
def test_a_line_pointing_back_past_an_example_refers_to_the_statement_the_example_illustrates(monkeypatch, skip):
    """ "For that, …" after "For example, …" means what the example illustrates, not the example."""
    if not skip:
        monkeypatch.setattr(reasons, "_ILLUSTRATES", re.compile(r"(?!)"))
    units = units_of(0, CACHE)
    assert units[2].text.startswith("For that")
    assert (reasons.antecedent(units[2], units) is units[0]) is skip
    assert (reasons.antecedent(units[2], units) is units[1]) is not skip


CACHE_ELSEWHERE = _evidence(
    "# Internals\n`stable_key` is used by the library internally when it restarts.", path="internals.md"
)


@pytest.mark.parametrize("rule", [True, False], ids=["purpose_with_antecedent", "control_no_for_that_rule"])
def test_asked_what_a_name_is_for_a_for_that_line_comes_first_with_what_it_points_to(monkeypatch, rule):
    """ "For that, the library provides `stable_key()`" says what the helper is for, through the line it points
    back to; "… is used by the library internally" only restates the question's "used"."""
    if not rule:
        monkeypatch.setattr(definitions, "FOR_THAT", re.compile(r"(?!)"))
    question = "What is stable_key used for?"
    sentences = extractive_sentences(question, [CACHE_ELSEWHERE, CACHE], max_sentences=1)
    answer = " ".join(s.text for s in sentences)
    assert ("survives a restart" in answer) is rule
    assert [s.joins_next for s in sentences] == ([True, False] if rule else [False])


def test_a_quoted_antecedent_is_kept_with_the_line_that_points_to_it_and_only_with_it():
    """The antecedent does not name the code asked about; the line pointing back to it does. Judged alone it
    is off the question (control), judged with that line it is kept - and dropped when that line is."""
    from kb_agent.agent.citations import CheckedAnswer
    from kb_agent.agent.sentences import Sentence

    before = "Sometimes a response must be stored under a key that survives a restart."
    pointing = "For that, the library provides a `stable_key()` helper."
    question = "What is stable_key used for?"
    paired = CheckedAnswer([CACHE], question, anchors=["stable_key"])
    shown = paired.add(Sentence(before, [1], joins_next=True)) + paired.add(Sentence(pointing, [1]))
    assert "survives a restart [1]" in shown and "`stable_key()` helper [2]" in shown and paired.kept == 2
    alone = CheckedAnswer([CACHE], question, anchors=["stable_key"])
    assert alone.add(Sentence(before, [1])) == "" and alone.claims[0].off_question
    unsupported = CheckedAnswer([CACHE], question, anchors=["stable_key"])
    shown = unsupported.add(Sentence(before, [1], joins_next=True))
    shown += unsupported.add(Sentence("For that, the library provides a `forever_key()` helper.", [1]))
    assert shown == "" and unsupported.kept == 0


PROMPT_PAGES = [
    _evidence(
        "# Incorrect credentials\n"
        "After detecting incorrect credentials, return a 401 error with the `WWW-Authenticate` header to make the"
        " browser show the login prompt again.",
        "retry.md",
    ),
    _evidence(
        "# HTTP Basic Auth\nIt returns a header with a value of `Basic`.\n\n"
        "That makes the browser show its integrated login prompt again, asking for a username and password.",
        "basic.md",
    ),
]


@pytest.mark.parametrize("rule", [True, False], ids=["dangling_line_left_out", "control_no_antecedent_rule"])
def test_a_lesser_line_pointing_back_to_a_line_that_is_not_quoted_is_left_out(monkeypatch, rule):
    """ "That tells the browser to show the integrated login prompt" quoted without what "that" is (bl04) says
    half of it; the best line answers."""
    if not rule:
        monkeypatch.setattr(quote_selection, "antecedent", lambda unit, units: None)
    question = "What makes the browser show the login prompt again?"
    answer = " ".join(s.text for s in extractive_sentences(question, PROMPT_PAGES))
    assert "`WWW-Authenticate` header" in answer
    assert ("That makes the browser" in answer) is not rule


SAME_MODEL = _evidence(
    "# Return the same input data\n"
    "We are using this model to declare our input and the same model to declare our output.\n\n"
    "Now the API will return the same password in the response.\n\n"
    "In this case, it might not be a problem, because it's the same user sending the password.\n\n"
    "But if we use the same model for another path operation, we could be sending our user's passwords to every "
    "client."
)


def test_a_risk_question_and_the_lines_that_tell_of_one():
    assert reasons.asks_risk("What is the risk of using the same model for input and output?")
    assert reasons.asks_risk("What are the downsides of async def?") and reasons.asks_risk("这样做有什么风险？")
    assert not reasons.asks_risk("Which model is used for the output?")
    assert reasons.states_risk("we could be sending our user's passwords to every client")
    assert not reasons.states_risk("In this case, it might not be a problem, because it's the same user.")


@pytest.mark.parametrize("rule", [True, False], ids=["risk_line_first", "control_no_risk_rule"])
def test_asked_the_risk_the_line_that_tells_what_could_go_wrong_is_quoted(monkeypatch, rule):
    """Every line restates the setup ("the same model", "password"); the one that says what could go wrong is
    the answer, and "it might not be a problem" is not."""
    if not rule:
        monkeypatch.setattr(extractive, "asks_risk", lambda question: False)
    question = "What is the risk of using the same model with a password for input and output?"
    ranked = extractive.rank(question, [SAME_MODEL])
    assert ranked[0].text.startswith("But if we use the same model") is rule
