"""Multi-step questions of stop 54's held-out bridge set (MuSiQue-style: the bridge is a name two records
mention, never a title): a declarative question whose subject carries a relative clause ("The man who beat Pete
Ashdown … had been an executive at which company?" is the man first, then the company), a statement before the
question that points back to it, a step answered by a record's "He …" sentence, and an owner's description.
Each shape has a control."""

from __future__ import annotations

import pytest

from kb_agent.agent import steps
from kb_agent.agent.main_clause import context_first, split_main_clause
from kb_agent.agent.step_rules import decompose


@pytest.mark.parametrize(
    ("question", "steps"),
    [
        (  # "who" opens with the clause's own verb; the next verb group is the main clause's
            "The man who beat Pete Ashdown for Utah's 2012 Democratic Senate nomination had been an executive at "
            "which company?",
            [
                "The man who beat Pete Ashdown for Utah's 2012 Democratic Senate nomination",
                "#1 had been an executive at which company?",
            ],
        ),
        (  # a participle after "was" is the clause's own verb group
            "The food writer who was married to journalist John Diamond judged a Channel 4 cooking show together with "
            "which French chef?",
            [
                "The food writer who was married to journalist John Diamond",
                "#1 judged a Channel 4 cooking show together with which French chef?",
            ],
        ),
        (  # "whose": the clause's subject comes first, then its verb
            "The Tampa expressway whose bridge suffered mishaps like Clearwater's Memorial Causeway grew out of which "
            "planned expressway system?",
            [
                "The Tampa expressway whose bridge suffered mishaps like Clearwater's Memorial Causeway",
                "#1 grew out of which planned expressway system?",
            ],
        ),
        (  # a preposition before "whom"
            "The TV cook after whom the economist Noreena Hertz was nicknamed was married to a journalist who died in "
            "which year?",
            [
                "The TV cook after whom the economist Noreena Hertz was nicknamed",
                "#1 was married to a journalist who died in which year?",
            ],
        ),
        (  # a clause nested in the clause keeps its verb ("that RoseLee Vincent won")
            "The state lawmaker whose stepping down led to the April 2014 special election that RoseLee Vincent won "
            "left office to lobby for which company?",
            [
                "The state lawmaker whose stepping down led to the April 2014 special election that RoseLee Vincent "
                "won",
                "#1 left office to lobby for which company?",
            ],
        ),
        (  # context before a semicolon stays with the subject that points back to it; "also" opens the main clause
            "Selma Archerd appeared in a 1988 Brady Christmas film; the actress in it who played Marcia also "
            "reprised the role in a 1976-77 variety spin-off, the subject of a 2009 book by which actress?",
            [
                "Selma Archerd appeared in a 1988 Brady Christmas film; the actress in it who played Marcia",
                "#1 also reprised the role in a 1976-77 variety spin-off, the subject of a 2009 book by which actress?",
            ],
        ),
    ],
)
def test_a_subjects_clause_is_the_first_step(question, steps):
    plan = decompose(question)
    assert plan is not None and plan.rule == "subject_clause" and plan.steps == steps


def test_control_without_the_split_the_subject_alone_is_searched(monkeypatch):
    """Control: with no main clause found, the old reading searches "The man" and asks the rest of it."""
    monkeypatch.setattr("kb_agent.agent.main_clause.split_main_clause", lambda rel, clause: None)
    plan = decompose(
        "The man who beat Pete Ashdown for Utah's 2012 Democratic Senate nomination had been an executive at which "
        "company?"
    )
    assert plan is not None and plan.rule == "relative_clause_asked" and plan.steps[0] == "The man"


@pytest.mark.parametrize(
    ("rel", "clause"),
    [
        ("who", "directed the film"),  # one verb group only: no main clause
        ("who", "played the chauffeur in the film directed by Jack Hill"),  # a reduced clause's participle
        ("that", "the united front formed"),  # an adjective after a determiner, then the clause's own verb
    ],
)
def test_no_main_clause_is_made_up(rel, clause):
    assert split_main_clause(rel, clause) is None


@pytest.mark.parametrize(
    "question",
    [
        "Which city is the band that Dick Humbert played for from?",  # the asked head before the clause
        "In which year did the man who beat Pete Ashdown join IBM?",  # an inverted question: not a subject
    ],
)
def test_questions_that_open_with_their_question_word_are_left_alone(question):
    plan = decompose(question)
    assert plan is None or plan.rule != "subject_clause"


DEM = (
    "Demos Yu-bou Chiang (), born on September 10, 1976 in Taipei, Taiwan, is a Taiwanese businessman. He founded "
    "DEM Inc. (橙果設計), a popular design studio in Taiwan in July 2003 and has served as its chairman since then."
)
ASHDOWN = "Peter Lynn Ashdown (born January 11, 1967) is the founder and CEO of Utah's first Internet service provider."


@pytest.mark.parametrize("rule", [True, False], ids=["record_subject", "control_no_record_subject"])
def test_a_step_answered_by_he_is_the_record_its_sentence_belongs_to(monkeypatch, rule):
    """mq-20 "the founder of DEM Inc.": the record says "He founded DEM Inc."; its subject is named where it
    opens. Without that, "CEO of Utah" (beside "founder" in another record) was the bridge."""
    if not rule:
        monkeypatch.setattr(steps, "_record_subject", lambda sentences: "")
    found = steps.bridge_candidates("the founder of DEM Inc.", [DEM, ASHDOWN], "Where is the founder of DEM Inc.?")
    assert (found[:1] == ["Demos Yu-bou Chiang"]) is rule


def test_a_verb_says_who_its_agent_noun_is():
    """ "founded" covers "founder" (the stemmer keeps them apart): the record's sentence covers the step."""
    found = steps.bridge_candidates("the founder of DEM Inc.", [DEM], "Where is the founder of DEM Inc.?")
    assert found[:1] == ["Demos Yu-bou Chiang"]


def test_a_record_opening_names_its_subject():
    assert steps._record_subject(["Bob Nielson (born September 28, 1959) is an American football coach."]) == (
        "Bob Nielson"
    )
    assert steps._record_subject(["In 1931 the company was founded."]) == ""  # no name opens it


def test_the_owners_description_goes_with_it():
    """mq-03: "The Scottish aviator Jim Mollison's wife …": the description is the owner's, not the step's."""
    plan = decompose(
        "The Scottish aviator Jim Mollison's wife was one of the first shareholders of an aircraft maker founded "
        "in which English city?"
    )
    assert plan.steps[0] == "the wife of the Scottish aviator Jim Mollison"
    assert plan.steps[1].startswith("#1 was one of the first shareholders")
    # a relation before the owner is a step of its own, not a description ("the great-grandfather of")
    plan = decompose("In which district is the temporary resting place of the great-grandfather of DEM Inc.'s founder?")
    assert plan.steps[0] == "the founder of DEM Inc."


@pytest.mark.parametrize(
    ("question", "steps"),
    [
        (  # a statement, then a question pointing back to what it describes
            "The director of the first British film shot in 3-D also made a 1970 sex comedy; under what title was it "
            "released in the USA?",
            [
                "The director of the first British film shot in 3-D also made a 1970 sex comedy",
                "#1 under what title was it released in the USA?",
            ],
        ),
        (  # the statement hides a step of its own: three steps
            "Big Boi's album before Boomiverse features a guest rapper from Harlem; which hip hop group is that rapper "
            "a member of?",
            [
                "the album of Big Boi",
                "#1 before Boomiverse features a guest rapper from Harlem",
                "#2 which hip hop group is that rapper a member of?",
            ],
        ),
    ],
)
def test_a_statement_before_the_question_is_searched_first(question, steps):
    plan = decompose(question)
    assert plan is not None and plan.steps == steps


def test_a_question_that_does_not_point_back_is_no_context_step():
    """Control: "…; which year was Kisaan released?" names what it asks about: one lookup after the statement."""
    assert context_first("Puneet Sira directed several films in 2009; which year was Kisaan released?") is None
    assert context_first("Puneet Sira directed several films in 2009; which year was it released?") is not None


def test_the_names_of_a_multi_step_answer_are_joined_by_passages():
    """Bridge set mq-08, model: "The head football coach at the University of …, where Todd Hoffner was offensive
    coordinator in 2006 and 2007, is Chuck Priore." was kept: each name is on some line, and Chuck Priore's record
    says "head football coach". No passage holds him with any other name of the sentence or the bridge."""
    from tests.conftest import evidence_under

    from kb_agent.agent.claims import ClaimChecker
    from kb_agent.agent.sentences import split_sentences

    sources = [
        evidence_under(
            "Todd Hoffner is an American football coach. He served as the offensive coordinator at the University of "
            "South Dakota from 2006 to 2007.",
            "hoffner.md",
            [],
        ),
        evidence_under(
            "Chuck Priore is an American football coach. He is the current head football coach at Stony Brook "
            "University, a position he has held since the 2006 season.",
            "priore.md",
            [],
        ),
        evidence_under(
            "Bob Nielson is an American football coach. He is the current head football coach at the University of "
            "South Dakota.",
            "nielson.md",
            [],
        ),
    ]
    question = "Who is head football coach at the university where Todd Hoffner was offensive coordinator in 2006?"
    restated = (
        "The head football coach at the University of South Dakota, where Todd Hoffner was offensive coordinator "
        "in 2006 and 2007, is {}."
    )

    def bridge(text: str) -> bool:
        return "university of south dakota" in text.lower()

    def supported(name: str, names_bridge=bridge) -> bool:
        checker = ClaimChecker(sources, question, names_bridge)
        return checker.check(split_sentences(restated.format(name))[0]).supported

    assert not supported("Chuck Priore") and supported("Bob Nielson")
    assert supported("Chuck Priore", names_bridge=None)  # control: no bridge, no tie asked


def test_the_bridge_joins_names_no_passage_holds_together():
    """mq-11, model: "… married to journalist John Diamond judged a Channel 4 cooking show together with French
    chef Ludo Lefebvre." is true: Nigella Lawson (the bridge, unnamed in it) is in both passages."""
    from tests.conftest import evidence_under

    from kb_agent.agent.claims import ClaimChecker
    from kb_agent.agent.sentences import split_sentences

    sources = [
        evidence_under(
            "John Diamond (10 May 1953 – 2 March 2001), was a British journalist and broadcaster. He was married to "
            "the food writer and TV cook Nigella Lawson from 1992 until his death from cancer in 2001.",
            "corpus.jsonl",
            [],
            471,
        ),
        evidence_under(
            "The Taste is a British cooking game show that aired on Channel 4 from 7 January to 11 March 2014. The "
            "judges and mentors are English chef and TV personality Nigella Lawson, American chef and food writer "
            "Anthony Bourdain and French chef Ludo Lefebvre.",
            "corpus.jsonl",
            [],
            473,
        ),
    ]
    question = (
        "The food writer who was married to journalist John Diamond judged a Channel 4 cooking show together with "
        "which French chef?"
    )
    sentence = split_sentences(question.replace("which French chef?", "French chef Ludo Lefebvre."))[0]

    def checked(bridge: str) -> bool:
        return ClaimChecker(sources, question, lambda text: bridge in text.lower()).check(sentence).supported

    assert checked("nigella lawson")
    assert not checked("anthony bourdain")  # control: a bridge only one passage names joins nothing
