"""The misses of stop 55's held-out set (`fastapi_docs_dev43.jsonl`), each with a control that turns its change
off: a sentence that runs on into a short block, a word no page writes, an abbreviation, a name asked "under which
name"."""

from __future__ import annotations

import pytest

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import coverage, example_lines, question_terms, quote_selection
from kb_agent.agent.question_terms import key_terms, term_credits

ATTACK = evidence_under(
    "Then one of your users could install it and run it locally.\n\n"
    "And that malicious website sends requests using `fetch()` with a `Blob` body to the local API at\n\n"
    "```\nhttp://localhost:8000/v1/agents/multivac\n```\n\n"
    "Even though the host of the malicious website and the local app is different, the browser won't trigger a "
    "CORS preflight request.",
    "strict-content-type.md",
    start=45,
    title="Strict Content-Type Checking",
)


@pytest.mark.parametrize("rule", [True, False], ids=["sentence_ends_in_its_block", "control_line_alone"])
def test_a_sentence_that_runs_on_into_a_short_block_is_quoted_with_it(monkeypatch, rule):
    """dev43 x4326: "… to the local API at" was quoted without the address, which is the block after it."""
    if not rule:
        monkeypatch.setattr(quote_selection, "block_ending", lambda unit, evidence: [])
        monkeypatch.setattr(example_lines, "block_ending", lambda unit, evidence: [])
    question = "Which local address does the malicious website send its requests to?"
    said = quoted_text(question, [ATTACK])
    assert ("localhost:8000/v1/agents/multivac" in said) is rule


def test_a_block_that_is_an_example_is_no_sentence_end():
    """A line that ends its sentence, or a long block, is quoted as before."""
    from kb_agent.agent.evidence_following import block_ending
    from kb_agent.agent.evidence_units import units_of

    long_block = ATTACK.model_copy(update={"text": ATTACK.text.replace("multivac\n", "multivac\na\nb\nc\n")})
    for evidence in (long_block, ATTACK.model_copy(update={"text": ATTACK.text.replace("API at", "API.")})):
        assert not any(block_ending(u, evidence) for u in units_of(0, evidence))


@pytest.mark.parametrize("rule", [True, False], ids=["short_form_held", "control_words_apart"])
def test_a_short_form_is_held_by_its_full_word(monkeypatch, rule):
    """dev43 c4313 asked of an "app"; the page says "application"."""
    if not rule:
        monkeypatch.setattr(question_terms, "_ABBREVIATED", {})
    text = "Deploy the application behind a proxy and read its configuration."
    asked = key_terms("Where do I deploy the app config?")
    credit = term_credits(set(question_terms.terms(text)), text, asked, short_forms=True)
    assert (credit.get("app") == 1.0 and credit.get("config") == 1.0) is rule


def test_under_which_name_asks_for_a_name():
    """dev43 t4302 "In which file and under which name …": the line says "an object called `app`"."""
    assert not {"under", "name"} & key_terms("Under which name does the fastapi command look for the app?")
    assert {"under", "name"} <= key_terms("Is the app listed under its own name?")  # control: no name asked for


CLI = (
    "# FastAPI CLI\n\n## `fastapi run`\n\nExecuting `fastapi run` starts FastAPI in production mode.\n\n"
    "By default, auto-reload is disabled. It also listens on the IP address `0.0.0.0`, which means all the available "
    "IP addresses, this way it will be publicly accessible to anyone that can communicate with the machine.\n\n"
    "## `fastapi dev`\n\nBefore importing your app, `fastapi dev` sets the `FASTAPI_ENV` environment variable to "
    "`development`.\n"
)
CLI_RUN = evidence_under(
    CLI.split("## `fastapi run`\n\n")[1].split("\n\n## ")[0], "fastapi-cli.md", start=128, title="FastAPI CLI"
)


@pytest.mark.parametrize("rule", [True, False], ids=["wording_counts_nothing", "control_wording_outweighs"])
def test_a_word_no_page_writes_does_not_outweigh_the_words_the_answer_shares(rule):
    """dev43 c4313 "Why is an app started with fastapi run reachable from other machines?" was refused: no page
    writes "reachable", and at its rarity (the store's weights, roughly) it outweighed every word the answering
    line holds."""
    from kb_agent.agent.coverage import covers

    store = rare_weights({"reachabl": 8.0, "machin": 4.0, "start": 3.0, "fastapi": 0.8})
    weights = coverage.discounted(store, {"reachabl"}) if rule else store
    question = "Why is an app started with fastapi run reachable from other machines?"
    assert covers(question, [CLI_RUN], weights) is rule


def test_only_a_word_that_says_how_is_the_askers_wording():
    """ "reachable" (how) counts nothing; "canary" (what: dev9 u804 "How do I do a canary deployment …?") still
    weighs, and the question is refused as before."""
    from kb_agent.agent.coverage import how_words

    assert how_words("Why is an app reachable from other machines?", {"reachabl", "machin"}) == {"reachabl"}
    assert how_words("How do I do a canary deployment of a FastAPI app?", {"canari"}) == set()
