"""`kb-agent eval answers` on the bundled demo docs: the harness scores what the issue asks for."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import HashEmbedder
from kb_agent.engine import Engine
from kb_agent.evaluation.answers import evaluate_answers

DEMO = Path(__file__).resolve().parents[1] / "demo" / "fastapi-docs"
SET = [
    {
        "id": "d1",
        "split": "tune",
        "type": "exact",
        "question": "What does max_age default to in the CORS middleware?",
        "gold": [{"path": "en/tutorial/cors.md", "start_line": 65, "end_line": 65}],
        "must_contain": [["600"]],
        "answerable": True,
    },
    {
        "id": "d2",
        "split": "holdout",
        "type": "zh",
        "question": "CORS 中间件的 max_age 默认值是多少？",
        "gold": [{"path": "zh/tutorial/cors.md", "start_line": 64, "end_line": 64}],
        "must_contain": [["600"]],
        "answerable": True,
    },
    {
        "id": "d3",
        "split": "tune",
        "type": "chitchat",
        "question": "Hello! Who are you?",
        "gold": [],
        "must_contain": [],
        "answerable": False,
    },
    {
        "id": "d4",
        "split": "holdout",
        "type": "unanswerable",
        "question": "How do I configure the built-in Kafka consumer scheduler?",
        "gold": [],
        "must_contain": [],
        "answerable": False,
    },
    {
        "id": "d5",
        "split": "tune",
        "type": "file_discovery",
        "question": "Which documentation file explains CORS?",
        "gold": [{"path": "en/tutorial/cors.md", "start_line": 1, "end_line": 1}],
        "must_contain": [["cors.md"]],
        "answerable": True,
    },
]


def test_eval_answers_on_the_demo_docs(settings, tmp_path):
    question_set = tmp_path / "set.jsonl"
    question_set.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in SET), encoding="utf-8")
    rows = tmp_path / "rows.jsonl"
    result = evaluate_answers(
        DEMO,
        question_set,
        settings.model_copy(update={"llm_provider": "none"}),
        out=rows,
        engine_factory=lambda s: Engine(s, embedder=HashEmbedder()),
    )
    by_id = {r["id"]: r for r in map(json.loads, rows.read_text().splitlines())}
    assert result["all"]["questions"] == 5 and result["all"]["errors"] == 0
    assert by_id["d1"]["contains_gold"] and by_id["d1"]["cites_gold"] and by_id["d2"]["contains_gold"]
    assert by_id["d3"]["chitchat_ok"] and by_id["d4"]["refused_ok"] and by_id["d5"]["cites_gold"]
    assert result["all"]["llm_calls"] == 0 and set(result["by_split"]) == {"tune", "holdout"}
    assert by_id["d1"]["cites_gold_text"] and result["all"]["unsupported_kept"] == 0


def test_kept_claims_are_rechecked_against_the_cited_lines_on_disk(tmp_path):
    from kb_agent.agent.answer import ClaimCheck
    from kb_agent.evaluation.answers import CitedLines, unsupported_kept

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cors.md").write_text("# CORS\nIntro.\nmax_age defaults to `600`.\n", encoding="utf-8")
    cited = CitedLines(tmp_path / "docs")
    right = ClaimCheck(sentence="The max_age default is 600.", supported=True, citation="docs/cors.md:L3-3")
    wrong = ClaimCheck(sentence="The max_age default is 600.", supported=True, citation="docs/cors.md:L1-2")
    missing = ClaimCheck(sentence="It is 600.", supported=True, citation="docs/gone.md:L1-1")
    removed = ClaimCheck(sentence="It is 1800.", supported=False, citation=None)
    assert unsupported_kept([right, removed], cited) == []
    assert unsupported_kept([wrong, missing], cited) == [wrong.sentence, missing.sentence]
    # code is a value too, as a whole word: `str` is not held by "strict", nor `max_age` by the heading
    code = ClaimCheck(sentence="The `max_age` default is 600.", supported=True, citation="docs/cors.md:L3-3")
    heading = ClaimCheck(sentence="See `max_age`.", supported=True, citation="docs/cors.md:L1-2")
    (tmp_path / "docs" / "types.md").write_text("Use strict mode.\nA `str` it is.\n", encoding="utf-8")
    strict = ClaimCheck(sentence="It is a `str`.", supported=True, citation="docs/types.md:L1-1")
    assert unsupported_kept([code], cited) == []
    assert unsupported_kept([heading, strict], cited) == [heading.sentence, strict.sentence]
    # the outbound filter masked a value of a quoted code line: the mask is not the file's text, nor a claim
    (tmp_path / "docs" / "user.md").write_text('user = UserIn(password="hunter2-long-secret")\n', encoding="utf-8")
    masked = ClaimCheck(sentence='user = UserIn(password="[SECRET]")', supported=True, citation="docs/user.md:L1-1")
    assert unsupported_kept([masked], cited) == []
    said = 'user = UserIn(password="[SECRET]") sets `max_age`.'
    other = ClaimCheck(sentence=said, supported=True, citation="docs/user.md:L1-1")
    assert unsupported_kept([other], cited) == [other.sentence]  # the values it did not mask still count


def test_contains_gold_reads_the_answer_as_rendered_markdown():
    from kb_agent.agent.answer import Answer
    from kb_agent.evaluation.answers import score

    item = {"id": "q", "type": "exact", "question": "What does ge=1 mean?", "answerable": True, "gold": []}
    item["must_contain"] = [["greater than or equal"]]
    marked = Answer(answer='With `ge=1` it must be "`g`reater than or `e`qual" to `1` [1].')
    assert score(item, marked, 0.1)["contains_gold"]
    assert not score(item, Answer(answer="With `ge=1` it must be greater than 1 [1]."), 0.1)["contains_gold"]


def test_the_on_disk_recheck_reads_a_listed_path_as_it_reads_the_sentence(tmp_path):
    """A file listing "`docs/_llm-test.md`" was counted unsupported: its value normalises to "llm-test.md", the
    cited path did not."""
    from types import SimpleNamespace

    from kb_agent.evaluation.answers import CitedLines, unsupported_kept

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "_llm-test.md").write_text("# LLM test file\nSome text.\n", encoding="utf-8")
    listed = SimpleNamespace(sentence="`docs/_llm-test.md`", supported=True, citation="docs/_llm-test.md:L1-2")
    assert unsupported_kept([listed], CitedLines(tmp_path)) == []
    wrong = SimpleNamespace(sentence="`docs/other.md`", supported=True, citation="docs/_llm-test.md:L1-2")
    assert unsupported_kept([wrong], CitedLines(tmp_path)) == ["`docs/other.md`"]  # control: another path
