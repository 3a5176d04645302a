"""The misses of the held-out sets of stop 54 (`fastapi_docs_dev42.jsonl` and the bridge multi-hop set) that
the answer step made, each with a control that turns its change off."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, quoted_text
from kb_agent.agent import answer_types, quote_selection
from kb_agent.agent.sentences import Sentence
from kb_agent.agent.step_quotes import _first_lines
from kb_agent.agent.step_rules import decompose
from kb_agent.tools.base import Evidence

DEPENDS = evidence_under(
    "Although you use `Depends` in the parameters of your function the same way you use `Body`, `Query`, etc, "
    "`Depends` works a bit differently.\n\nYou only give `Depends` a single parameter.\n\n"
    "This parameter must be something like a function.",
    "dependencies/index.md",
    ["Dependencies", "Declare the dependency"],
    74,
)


@pytest.mark.parametrize("rule", [True, False], ids=["only_a_single_counts", "control_single_no_count"])
def test_only_a_single_thing_answers_how_many(monkeypatch, rule):
    """dev42 t4213 "How many parameters do you give Depends?" was refused: "a single parameter" gave no number."""
    if not rule:
        plain = re.compile(answer_types._NUMBER.pattern.replace(r"|\bonly\s+(?:\S+\s+){0,4}?single\b", ""), re.I)
        types = [(name, plain if shape is answer_types._NUMBER else shape, *rest) for name, shape, *rest in
                 answer_types.ANSWER_TYPES]  # fmt: skip
        monkeypatch.setattr(answer_types, "ANSWER_TYPES", types)
        monkeypatch.setattr(answer_types, "_NUMBER", plain)
    question = "How many parameters do you give Depends?"
    line = "You only give `Depends` a single parameter."
    assert answer_types.states_each(answer_types.asked_types(question), line, question) is rule


def test_a_single_thing_without_only_is_no_count():
    """ "We can read a single `Hero`" says nothing of how many the database holds (dev17 u1703)."""
    assert not answer_types.states_each(
        answer_types.asked_types("How many heroes can it store?"), "We can read a single `Hero`.", "How many heroes?"
    )


def test_a_counterpart_of_a_name_is_no_hidden_step():
    """dev42 t4210: "the request-body counterpart of Query and Path" is a thing like them, asked directly."""
    plan = decompose("Which FastAPI class is the request-body counterpart of Query and Path?")
    assert plan is None or plan.rule != "of_relation"
    assert decompose("Which FastAPI class is the director of Query and Path?").rule == "of_relation"  # control


BIO = Evidence(
    source="corpus.jsonl",
    path="corpus.jsonl",
    start_line=951,
    end_line=951,
    text="Bob Nielson (born September 28, 1959) is an American football coach. He is the current head football coach "
    "at the University of South Dakota. Nielson has also served as the head football coach at Ripon College.",
)


@pytest.mark.parametrize("rule", [True, False], ids=["record_subject_quoted", "control_pronoun_alone"])
def test_asked_who_a_line_opening_he_comes_with_the_record_naming_him(monkeypatch, rule):
    """Bridge set mq-08 "Who is head football coach at the University of South Dakota?" was answered "He is the
    current head football coach at …": right, but who is "he"? The record's opening line names him."""
    if not rule:
        monkeypatch.setattr(quote_selection, "_with_whose", lambda chosen, sources: chosen)
    said = quoted_text("Who is head football coach at the University of South Dakota?", [BIO])
    assert "He is the current head football coach" in said
    assert ("Bob Nielson" in said) is rule


def test_asked_no_person_the_record_line_is_not_added():
    said = quoted_text("Which university does the current head football coach work at?", [BIO])
    assert "He is the current head football coach" in said and "Bob Nielson" not in said


def test_a_line_quoted_for_another_takes_no_place_of_its_own():
    """The last step's lines are capped at three: a record's opening line brought for a "He" line is not one
    of them, and one whose line was cut goes too."""
    lines = [Sentence("a", [1]), Sentence("Bob (born 1959) is a coach.", [2], joins_next=True), Sentence("He…", [2])]
    assert [s.text for s in _first_lines([*lines, Sentence("d", [3])], 2)] == ["a", lines[1].text, "He…"]
    assert [s.text for s in _first_lines(lines, 1)] == ["a"]


CIHU = Evidence(
    source="corpus.jsonl",
    path="corpus.jsonl",
    start_line=807,
    end_line=807,
    text="Cihu Mausoleum (), officially known as the Mausoleum of Late President Chiang () or President Chiang "
    "Kai-shek Mausoleum is the temporary resting place of President Chiang Kai-shek. It is located in Daxi "
    "District, Taoyuan City, Taiwan. When Chiang Kai-shek died in 1975, he was not buried in the traditional "
    "Chinese fashion.",
)


@pytest.mark.parametrize("rule", [True, False], ids=["long_opening_read", "control_short_opening_only"])
def test_a_records_opening_with_a_long_apposition_still_names_its_subject(monkeypatch, rule):
    """mq-20 "In which district is the temporary resting place of …?": "It is located in Daxi District" goes on
    about the mausoleum its record opens with, after a long "officially known as …"."""
    from kb_agent.agent import reasons

    if not rule:
        short = reasons._DEFINES_SUBJECT.pattern.replace("{0,160}", "{0,60}")
        monkeypatch.setattr(reasons, "_DEFINES_SUBJECT", re.compile(short))
    said = quoted_text("In which district is the temporary resting place of President Chiang Kai-shek?", [CIHU])
    assert ("Daxi District" in said) is rule


def test_a_place_asked_by_its_kind_is_named_with_it():
    from kb_agent.agent.asked_shapes import names_of_kind, prose_kind

    assert prose_kind("In which district is the mausoleum?") == "district"
    assert prose_kind("Which class does FastAPI provide?") is None  # a code kind is another rule's
    assert names_of_kind("It is located in Daxi District, Taoyuan City.", "district")
    assert names_of_kind("He coaches at the University of South Dakota.", "university")
    assert not names_of_kind("The district court ruled.", "district")
    # the kind is the head of what is asked: a school, not a college (HotpotQA 5ab7b1e5)
    assert prose_kind("Charles Andrews graduated from what college preparatory boys' school?") is None
