"""A line that introduces a terminal command is quoted with the command; a why-question is answered from the
section titled "Why …"; two asked words the text writes as one word are held (dev15, stop 39)."""

from __future__ import annotations

import pytest

from kb_agent.agent import evidence_following, evidence_units, extractive, question_terms, quote_selection
from kb_agent.agent.citations import CheckedAnswer
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.agent.question_terms import term_credits
from kb_agent.agent.sentences import Sentence
from kb_agent.text.tokenize import tokenize
from kb_agent.tools.base import Evidence
from test_extractive import _evidence

SECRET = """Create a random secret key that will be used to sign the JWT tokens.

To generate a secure random secret key use the command:

<div class="termy">

```console
$ openssl rand -hex 32

09d25e094faa6ca2556c818166b7a9563b93f7099f6f0f4caa6cf63b88e8d3e7
```

</div>

And copy the output to the variable `SECRET_KEY` (don't use the one in the example).
"""

HASHING = """### Why use password hashing { #why-use-password-hashing }

If your database is stolen, the thief won't have your users' plaintext passwords, only the hashes."""
STORE = "You would also **hash** the values of the passwords before storing them, **never store them in plain text**."


def _even(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


def _checked(question: str, sources: list[Evidence], sentences: int = 1) -> CheckedAnswer:
    answer = CheckedAnswer(sources, question)
    for sentence in extractive_sentences(question, sources, max_sentences=sentences, weights=_even):
        answer.add(sentence)
    return answer


@pytest.mark.parametrize("rule", [True, False], ids=["command_quoted", "control_line_alone"])
def test_a_line_that_introduces_a_command_is_quoted_with_it_and_cited_to_it(monkeypatch, rule):
    """dev15 t1504: "To generate a secure random secret key use the command:" was outranked as a restatement of
    the question and, quoted, ended at its colon; the command sits in the terminal block below it."""
    if not rule:
        monkeypatch.setattr(extractive, "commands_after", lambda unit, evidence: [])
        monkeypatch.setattr(quote_selection, "commands_after", lambda unit, evidence: [])
    source = _evidence(SECRET, "en/docs/tutorial/security/oauth2-jwt.md", ["JWT", "Handle JWT tokens"], 135)
    answer = _checked("Which command generates a secure random secret key for signing JWT tokens?", [source])
    assert ("- $ openssl rand -hex 32" in answer.body) is rule
    if rule:  # the output is no command, and the citation reaches the command's line through the fence
        assert "09d25e" not in answer.body
        assert (answer.citations[0]["start_line"], answer.citations[0]["end_line"]) == (137, 142)


def test_only_a_command_right_below_the_line_is_its_command():
    prose = _evidence("Run it like this:\n\nThe server starts.\n\n$ fastapi run\n", "a.md", [])
    assert evidence_following.commands_after(evidence_units.units_of(0, prose)[0], prose) == []
    two = _evidence("Install both packages in your project with:\n\n```bash\n$ uv add a\n$ uv add b\n```\n", "b.md", [])
    assert evidence_following.commands_after(evidence_units.units_of(0, two)[0], two) == ["$ uv add a", "$ uv add b"]


def test_the_sentence_after_a_quoted_command_starts_its_own_line():
    """It had run on after the command's marker: "- $ openssl rand -hex 32 [2] Create a variable …"."""
    source = _evidence(SECRET, "en/docs/tutorial/security/oauth2-jwt.md", ["JWT", "Handle JWT tokens"], 135)
    answer = CheckedAnswer([source], "Which command generates a secure random secret key?")
    answer.add(Sentence("To generate a secure random secret key use the command:\n- $ openssl rand -hex 32", [1]))
    answer.add(Sentence("And copy the output to the variable `SECRET_KEY` (don't use the one in the example).", [1]))
    assert "- $ openssl rand -hex 32 [1]\nAnd copy the output" in answer.body


@pytest.mark.parametrize("rule", [True, False], ids=["why_section_first", "control_no_bonus"])
def test_a_why_question_is_answered_from_the_section_titled_why(monkeypatch, rule):
    """dev15 c1502: asked why to hash passwords, the sql-databases line that only says to hash them ranked
    above "If your database is stolen …", which is the page's "Why use password hashing" section."""
    if not rule:
        monkeypatch.setattr(extractive, "REASON_BONUS", 0.0)
    store = _evidence(STORE, "en/docs/tutorial/sql-databases.md", ["SQL (Relational) Databases", "Create Models"], 251)
    why = _evidence(
        HASHING, "en/docs/tutorial/security/oauth2-jwt.md", ["OAuth2 with JWT", "Password hashing"], start=61
    )
    found = extractive_sentences(
        "Why should I hash passwords instead of storing them in plain text?", [store, why], max_sentences=1,
        weights=_even,
    )  # fmt: skip
    assert ("stolen" in found[0].text) is rule


def test_two_asked_words_the_text_writes_as_one_are_held():
    asked = set(tokenize("plain text password"))
    credit = term_credits(set(tokenize("your users' plaintext passwords")), "your users' plaintext passwords", asked)
    assert credit.get("plain") == credit.get("text") == 1.0
    apart = term_credits(set(tokenize("a plain list of text")), "a plain list of text", {"plain", "text"})
    assert apart == {"plain": 1.0, "text": 1.0}  # written apart, as before
    none = term_credits(set(tokenize("the textbook")), "the textbook", {"plain", "text"})
    assert "plain" not in none  # "text" is no part of "plaintext" here


def test_a_pronoun_is_no_key_term():
    assert "them" not in question_terms.key_terms("Why should I hash passwords instead of storing them in plain text?")
