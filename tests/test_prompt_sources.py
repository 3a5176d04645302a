"""What the answer model reads for a plainly simple question: the extractive ranker's best lines, each with
its neighbours, under their sources' own numbers - not the first sources' windows."""

from __future__ import annotations

import pytest

from conftest import write
from kb_agent.agent.extractive import rank
from kb_agent.agent.prompt_sources import ranked_sources, render_sources
from kb_agent.llm.scripted import ScriptedLLM
from kb_agent.tools.base import Evidence
from test_agent_graph import ByRole, route
from test_answers import CORS, _indexed


def _evidence(text: str, path: str, start: int = 1) -> Evidence:
    lines = text.split("\n")
    return Evidence(source=path, path=path, start_line=start, end_line=start + len(lines) - 1, text=text)


FILLER = "\n\n".join(f"Paragraph {i} is about routing and other topics entirely." for i in range(20))
ANSWER_PAGE = "\n".join(
    [f"Intro line {i} on unrelated matters." for i in range(30)]
    + ["The middleware is configured per application.", "", "* `max_age` - cache time. Defaults to `600`.", ""]
    + ["The middleware answers preflight requests.", "Tail line."]
)


def test_the_ranked_lines_come_with_their_neighbours_under_their_own_source_number():
    sources = [_evidence(FILLER, "routing.md"), _evidence(ANSWER_PAGE, "cors.md", 100)]
    question = "What is the default max_age?"
    rendered = ranked_sources(sources, rank(question, sources), 1000)
    assert rendered is not None
    assert '<source id="2" path="cors.md"' in rendered and 'id="1"' not in rendered  # [2] still means cors.md
    assert "132| * `max_age` - cache time. Defaults to `600`." in rendered
    # the nearest non-blank lines either side: the paragraph before and after, across the blank lines
    assert "130| The middleware is configured per application." in rendered
    assert "134| The middleware answers preflight requests." in rendered
    assert "Intro line 0" not in rendered and "Tail line" not in rendered
    assert len(rendered) < len(render_sources(sources, 450, question))


def test_no_ranked_line_means_no_ranked_prompt():
    sources = [_evidence(FILLER, "routing.md")]
    assert ranked_sources(sources, rank("What is the default max_age?", sources), 1000) is None


def test_a_code_line_carries_what_its_annotation_calls_it():
    page = "\n".join(
        [
            *("```Dockerfile", "# (1)!", "FROM python:3.14", "", "# (2)!", "WORKDIR /code", "```", ""),
            *("1. Start from the official Python base image.", "", "2. Set the current working directory."),
        ]
    )
    sources = [_evidence(page, "docker.md", 10)]
    rendered = ranked_sources(sources, rank("Which base image does the example start from?", sources), 1000)
    assert rendered is not None and "12| FROM python:3.14    ← (Start from the official Python base image.)" in rendered


def test_a_paragraph_long_line_shows_the_ranked_sentence_not_the_paragraph():
    opening = " ".join(f"Opening sentence {i} on unrelated matters." for i in range(20))
    line = f"{opening} The `max_age` setting defaults to `600` seconds. {opening.replace('Opening', 'Closing')}"
    sources = [_evidence(f"# CORS\n{line}", "cors.md", 10)]
    rendered = ranked_sources(sources, rank("What is the default max_age?", sources), 300)
    assert rendered is not None and "11| … The `max_age` setting defaults to `600` seconds." in rendered
    assert "Opening sentence 0 " not in rendered


@pytest.mark.parametrize("mode", ["ranked", "windows"], ids=["ranked", "control_windows"])
def test_a_plainly_simple_question_reads_the_ranked_lines_once(settings, tmp_path, mode):
    """Six copies of one page: the windows repeat the same lines in every source; the ranked prompt shows the
    answer line once, with its neighbours."""
    for i in range(6):
        write(tmp_path / "docs" / f"cors{i}.md", CORS.replace("# CORS", f"# CORS {i}"))
    settings.simple_prompt, settings.simple_max_sources = mode, 5
    script = ByRole(route=route(), synth="`max_age` defaults to `600` [1].")
    with _indexed(settings, tmp_path / "docs", llm=ScriptedLLM(script)) as engine:
        answer = engine.answer_query("What does max_age default to in CORSMiddleware?")
        prompt = engine.llms().main.prompts[-1][-1]["content"]
    assert not answer.refused and answer.citations
    assert (prompt.count("Defaults to `600`"), prompt.count("<source id=")) == ((1, 1) if mode == "ranked" else (5, 5))


@pytest.mark.parametrize(
    ("question", "ranked"),
    [
        ("What does max_age default to in CORSMiddleware?", True),
        ("What does the setting that CORSMiddleware caches preflight responses for default to?", False),
    ],
    ids=["one_lookup_ranked", "bridge_shape_windows"],
)
def test_auto_reads_the_ranked_lines_unless_the_question_is_shaped_like_a_multi_hop_one(
    settings, tmp_path, question, ranked
):
    """'auto' (the default): the ranked lines hold the question's words; a question that reaches its answer
    through a relative clause or a possessive needs the lines around them too (7 of 47 multi-hop answers were
    lost to the ranked prompt, stop 38)."""
    for i in range(6):
        write(tmp_path / "docs" / f"cors{i}.md", CORS.replace("# CORS", f"# CORS {i}"))
    settings.simple_prompt, settings.simple_max_sources = "auto", 5
    script = ByRole(route=route(), synth="`max_age` defaults to `600` [1].")
    with _indexed(settings, tmp_path / "docs", llm=ScriptedLLM(script)) as engine:
        engine.answer_query(question)
        prompt = engine.llms().main.prompts[-1][-1]["content"]
    assert (prompt.count("<source id=") == 1) is ranked


def test_the_shape_of_a_multi_hop_question():
    from kb_agent.agent.step_rules import has_bridge_shape

    assert has_bridge_shape("In which city is the university that runs Toad Hall located?")
    assert has_bridge_shape("Where is the publisher of The Orange Eats Creeps based?")
    assert has_bridge_shape("What was the first single on Big Boi's album?")
    assert not has_bridge_shape("What does max_age default to in CORSMiddleware?")
    assert not has_bridge_shape("Which command generates a secure random secret key?")


def test_the_windows_leave_out_blank_lines_and_the_tag_its_line_range():
    """On a CPU each prompt token is time before the first word: a blank line ("121| ") says nothing, and every
    line carries its own number, so the tag's range repeats it. The numbers keep the gap visible; "…" marks
    only a skipped line with text. The budget then holds lines with text: here the answer's two neighbours."""
    text = "The middleware is configured per application.\n\n* `max_age` - cache time. Defaults to `600`.\n\nTail."
    rendered = render_sources([_evidence(text, "cors.md", 130)], 450, "What is the default max_age?")
    assert "lines=" not in rendered
    assert "130| The middleware is configured per application.\n132| * `max_age`" in rendered
    assert "131|" not in rendered and "133|" not in rendered and "…" not in rendered
    long_page = "\n".join(
        ["Intro on other things."] * 3 + ["", "* `max_age` - cache time. Defaults to `600`.", ""] + ["Other."] * 30
    )
    focused = render_sources([_evidence(long_page, "cors.md", 1)], 120, "What is the default max_age?")
    assert "5| * `max_age`" in focused and "4|" not in focused and "6|" not in focused
    assert "3| Intro on other things." in focused and "7| Other." in focused  # the budget went to text


@pytest.mark.parametrize("read_sources", [10, 1], ids=["every_passage_read", "control_only_the_shown_ones"])
def test_the_ranked_prompt_finds_its_line_in_every_passage_the_quotes_read(
    settings, tmp_path, monkeypatch, read_sources
):
    """The prompt's lines are ranked in the passages the claim check and the quotes read, not only in the first
    `synth_max_sources`: dev63 x6306's answer was an English release note fused down to 7th, and the model, shown
    the first five passages' windows, answered another feature's version. The control reads only the shown ones."""
    import kb_agent.agent.synthesize as synthesize

    write(tmp_path / "docs" / "cors.md", CORS)
    for i in range(3):  # pages that say the question's words more often, and not what it asks
        line = "The default of CORSMiddleware max_age: see CORSMiddleware max_age default.\n"
        decoy = f"# CORSMiddleware max_age {i}\n" + line * 3
        write(tmp_path / "docs" / f"decoy{i}.md", decoy)
    monkeypatch.setattr(synthesize, "READ_SOURCES", read_sources)
    settings.simple_prompt, settings.synth_max_sources = "ranked", 1
    script = ByRole(route=route(), synth="`max_age` defaults to `600` [1].")
    with _indexed(settings, tmp_path / "docs", llm=ScriptedLLM(script)) as engine:
        answer = engine.answer_query("What does max_age default to in CORSMiddleware?")
        prompt = engine.llms().main.prompts[-1][-1]["content"]
    assert [e["path"] for e in answer.evidence].index("docs/cors.md") > 0  # found, below the one source shown
    assert ("Defaults to `600`" in prompt) is (read_sources > 1)
