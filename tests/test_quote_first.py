"""Quote first: with the local CPU model, a plainly simple question whose best evidence line says the question's
key terms itself is answered by quoting that line, without the 10-30 s model call. Other questions, and any
question with an API model (unless `always`), go to the model."""

from __future__ import annotations

import pytest

from test_agent_graph import ByRole, fit_grades, make_engine, route

MODEL_SAYS = "To read a JSON request body, declare a Pydantic model [1]."


@pytest.mark.parametrize(
    ("mode", "backend", "quoted"),
    [
        ("auto", "local", True),
        ("never", "local", False),  # control: the model writes the answer
        ("auto", "openai", False),  # an API model answers in a second or two: it writes the answer
        ("always", "openai", True),
    ],
)
def test_a_plainly_simple_question_the_evidence_states_is_quoted_without_a_model_call(
    settings, docs, monkeypatch, mode, backend, quoted
):
    monkeypatch.setattr(type(settings), "generation_backend", property(lambda self: backend))
    script = ByRole(synth=MODEL_SAYS)
    engine, _ = make_engine(settings, docs, script, route_by_shape=True, quote_first=mode)
    answer = engine.answer_query("How do I read a JSON request body?")
    assert answer.answer.startswith("Declare a Pydantic model to read a JSON request body [1].") is quoted
    assert answer.answer.startswith("To read a JSON request body, declare a Pydantic model [1].") is not quoted
    assert ("synth" in script.roles) is not quoted and answer.llm_calls == (0 if quoted else 1)
    assert any("answered by quoting" in n for n in answer.notices) is quoted


def test_a_question_no_line_states_by_itself_goes_to_the_model(settings, docs, monkeypatch):
    """No line says both "tasks" and "errors": below QUOTE_OWN of the key terms on one line, the model answers."""
    from kb_agent.agent import extractive

    monkeypatch.setattr(extractive, "QUOTE_OWN", 0.95)
    monkeypatch.setattr(type(settings), "generation_backend", property(lambda self: "local"))
    script = ByRole(synth="BackgroundTasks run after the response is sent [1].")
    engine, _ = make_engine(settings, docs, script, route_by_shape=True, quote_first="auto")
    answer = engine.answer_query("When do background tasks run relative to errors?")
    assert "synth" in script.roles and answer.llm_calls == 1


def test_a_question_routed_as_complex_is_never_quoted_first(settings, docs, monkeypatch):
    monkeypatch.setattr(type(settings), "generation_backend", property(lambda self: "local"))
    script = ByRole(route=route(complexity="complex"), plan='{"queries": []}', grade=fit_grades(0.9), synth=MODEL_SAYS)
    engine, _ = make_engine(settings, docs, script, quote_first="auto")
    answer = engine.answer_query("How do I read a JSON request body?")
    assert "synth" in script.roles and answer.answer.startswith("To read a JSON request body")
