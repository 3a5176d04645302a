"""The misses of stop 62's baseline and held-out set (`fastapi_docs_dev57.jsonl`) that the answer step owns."""

from __future__ import annotations

from conftest import evidence_under, quoted_text
from kb_agent.agent import quote_selection, reasons
from kb_agent.agent.evidence_units import units_of
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
    assert reason_beside(units[1], units) is None
    assert "redirects" not in quoted_text(question, [PUBLIC_URL])
