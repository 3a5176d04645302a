"""The misses of stop 60's held-out set (`fastapi_docs_dev53.jsonl`) that the answer step owns: Chinese questions
answered only by English pages, and unanswerable questions answered from a line about something else."""

from __future__ import annotations

import re

from conftest import evidence_under, rare_weights
from kb_agent.agent import answer_types, extractive, other_language, question_terms

_NEVER = re.compile(r"(?!)")


def _ranked(question: str, passages, rare: dict[str, float] | None = None) -> list[str]:
    return [u.text for u in extractive.rank(question, passages, None, rare_weights(rare or {}))]


SLIM = evidence_under(
    "## 0.129.2 (2026-02-21)\n\n### Internal\n\n"
    "* 👷 Fix CI, do not attempt to publish `fastapi-slim`. PR [#14958](https://github.com/fastapi/fastapi/pull/14958).\n"
    "* ➖ Drop support for `fastapi-slim`, no more versions will be released, use only `fastapi`. PR [#14957](x).",
    "en/docs/release-notes.md",
    ["Release Notes", "0.129.2 (2026-02-21)", "Internal"],
    start=821,
).model_copy(
    update={"glossary": {"版本": ["version"], "开始": ["start"], "不再": ["longer", "anymor"], "发布": ["releas"]}}
)


SLIM_WEIGHTS = {"fastapi-slim": 6.0, "发布": 5.7, "不再": 4.8, "开始": 4.1, "版本": 3.6}  # the FastAPI docs' own


def test_since_which_version_is_a_frame(monkeypatch):
    """x5301 "从哪个版本开始 fastapi-slim 不再发布新版本？" answered with a Pydantic line: 开始 ("start") was a word the
    release note had to say, and its "no more versions" did not hold 不再 ("no longer")."""
    question = "从哪个版本开始 fastapi-slim 不再发布新版本？"
    assert "开始" not in question_terms.key_terms(question)
    assert "开始" in question_terms.key_terms("开始之前要做什么？")
    assert any("Drop support" in t for t in _ranked(question, [SLIM], SLIM_WEIGHTS))
    monkeypatch.setattr(question_terms, "_SINCE", _NEVER)  # control: 开始 to find, and 不再 read as "longer" alone
    assert any("Drop support" in t for t in _ranked(question, [SLIM], SLIM_WEIGHTS))  # (either fix alone answers)
    monkeypatch.setattr(other_language, "_NO_MORE", _NEVER)
    assert not any("Drop support" in t for t in _ranked(question, [SLIM], SLIM_WEIGHTS))


def test_no_longer_is_held_by_no_more(monkeypatch):
    """The lexicon reads 不再 as "longer"; the release note says "no more versions will be released"."""
    line = "Drop support for `fastapi-slim`, no more versions will be released"
    assert extractive.translated({"不再"}, {"drop", "support"}, SLIM, line) == {"不再": 1.0}
    assert extractive.translated({"不再"}, {"drop", "support"}, SLIM, "Drop support for it") == {
        "不再": extractive.UNTRANSLATED
    }
    monkeypatch.setattr(other_language, "_NO_MORE", _NEVER)  # control
    assert extractive.translated({"不再"}, {"drop", "support"}, SLIM, line) == {"不再": extractive.UNTRANSLATED}


PEOPLE = evidence_under(
    "There are hundreds of other contributors, you can see them all in the FastAPI GitHub Contributors page.\n\n"
    "As of July 2026, most of the work has been done by (paid) team members for quite some time.",
    "en/docs/fastapi-people.md",
    ["FastAPI People"],
    start=95,
).model_copy(update={"glossary": {"除了": ["apart"], "团队": ["team"], "其他": ["other"], "贡献": ["contribut"]}})


PEOPLE_WEIGHTS = {"贡献者": 7.6, "除了": 5.0, "团队": 4.6, "fastapi": 0.8, "其他": 2.7}


def test_a_count_in_words_answers_and_a_date_is_no_count(monkeypatch):
    """x5305 "FastAPI 除了团队以外大概有多少其他贡献者？" quoted "As of July 2026, …": 2026 passed as the count,
    "hundreds" was no number, and 贡献者 (contributor) was learned only as 贡献 ("contribut")."""
    question = "FastAPI 除了团队以外大概有多少其他贡献者？"
    assert {"以外", "大概"}.isdisjoint(question_terms.key_terms(question))
    ranked = _ranked(question, [PEOPLE], PEOPLE_WEIGHTS)
    assert ranked and "hundreds" in ranked[0]
    dated = "As of July 2026, most of the work has been done by (paid) team members."
    assert not answer_types.states_each([1], dated, question)
    monkeypatch.setattr(answer_types, "_DATE_SHAPE", _NEVER)  # control: the year counts
    assert answer_types.states_each([1], dated, question)


def test_a_learned_stem_is_held_by_a_longer_word_of_its_family():
    source = PEOPLE
    assert extractive.translated({"贡献者"}, {"contributor"}, source) == {"贡献者": 1.0}
    # a part can mean something else (所有者 "owner" holds 所有 "all"): not finding it leaves the word unread
    assert extractive.translated({"贡献者"}, {"contrast"}, source) == {}


CALCULATED = evidence_under(
    "It also highlights contributions from sponsors.\n\nThe data used to be calculated continuously, each month.",
    "en/docs/fastapi-people.md",
    ["FastAPI People", "About the data - technical details"],
    start=177,
    title="FastAPI People",
).model_copy(update={"glossary": {"页面": ["page"], "数据": ["data"], "计算": ["comput"]}})


def test_asked_how_often_a_frequency_in_words_answers(monkeypatch):
    """x5302 "FastAPI People 页面的数据以前多久计算一次？" was refused: 多久 asked a number of a time unit, and the
    line says "each month"."""
    question = "FastAPI People 页面的数据以前多久计算一次？"
    assert "一次" not in question_terms.key_terms(question)
    assert any("each month" in t for t in _ranked(question, [CALCULATED], {"peopl": 5.0}))
    monkeypatch.setattr(answer_types, "ASKS_FREQUENCY", _NEVER)  # control
    assert not any("each month" in t for t in _ranked(question, [CALCULATED], {"peopl": 5.0}))


CLOUD = evidence_under(
    "You can deploy your FastAPI app to FastAPI Cloud with just **one command**.",
    "en/docs/deployment/fastapicloud.md",
    ["FastAPI Cloud"],
    start=3,
)


def test_a_line_in_the_other_language_sharing_only_the_subject_is_no_answer(monkeypatch):
    """x5305 quoted "… deploy your FastAPI app … with just one command" beside the contributors line: it shares only
    "FastAPI", which every page of the FastAPI docs writes, and the words it cannot hold gave it the rest."""
    question = "FastAPI 的吉祥物叫什么名字？"  # (a mascot no page names)
    weights = {"fastapi": 0.8, "吉祥物": 6.0}
    assert _ranked(question, [CLOUD], weights) == []
    monkeypatch.setattr(extractive, "subject_names", lambda names, weights: set())  # control
    assert _ranked(question, [CLOUD], weights)


SCOPE = evidence_under(
    'And when using `Depends(scope="request")` (the default), the exit code after `yield` is executed after the '
    "response is sent.",
    "en/docs/advanced/advanced-dependencies.md",
    ["Advanced Dependencies", "Dependencies with yield and scope"],
    start=85,
)


def test_asked_the_default_of_a_thing_a_line_naming_none_gives_another_default(monkeypatch):
    """u5304 "What is the default timeout for the exit code of a dependency with yield?" (the docs name no timeout)
    was answered with the default scope."""
    question = "What is the default timeout for the exit code of a dependency with yield?"
    assert answer_types.default_of(question) == "timeout"
    assert answer_types.default_of("What is the default value of max_age?") is None
    assert _ranked(question, [SCOPE], {"timeout": 6.0}) == []
    assert answer_types.asked_types(question) == [1]  # a default timeout is a number too (dev59 u5903)
    monkeypatch.setattr(answer_types, "default_of", lambda question: None)  # control: both guards off
    monkeypatch.setattr(answer_types, "asked_types", lambda question: [])
    assert _ranked(question, [SCOPE], {"timeout": 6.0})


def test_asked_a_count_per_thing_a_line_must_count_per_that_thing(monkeypatch):
    """u5302 "How many worker processes per CPU core does the deployment concepts page recommend?" was answered
    "only one process can be listening on one combination of port and IP"."""
    question = "How many worker processes per CPU core does the deployment concepts page recommend?"
    types = answer_types.asked_types(question)
    line = "only one process can be listening on one combination of port and IP address in a server"
    assert not answer_types.states_each(types, line, question)
    assert answer_types.states_each(types, "Run 2 worker processes per CPU core.", question)
    monkeypatch.setattr(answer_types, "_PER_THING", _NEVER)  # control
    assert answer_types.states_each(types, line, question)


def test_asked_how_many_rows_a_line_must_count_rows():
    """u5303 "SQLModel 教程里的 Hero 表最多能存多少行数据？" was answered with "也是一个 Pydantic 模型"."""
    question = "SQLModel 教程里的 Hero 表最多能存多少行数据？"
    types = answer_types.asked_types(question)
    assert not answer_types.states_each(
        types, "每个 SQLModel 模型同时也是一个 Pydantic 模型，所以你可以使用它。", question
    )
    assert answer_types.states_each(types, "每张表最多可以存 100 万行数据。", question)


def test_asked_how_many_things_in_chinese_an_english_line_must_count_things(monkeypatch):
    """dev52 u5203 "response_model_include 最多可以包含多少个字段？" (no page says) was answered once English lines were
    read for a count: "if you have only one Pydantic model" counts no fields."""
    question = "response_model_include 最多可以包含多少个字段？"
    line = "This can be used as a quick shortcut if you have only one Pydantic model and want to remove some data."
    assert not answer_types.states_each([1], line, question)
    assert answer_types.states_each([1], "It can include up to 64 fields.", question)
    monkeypatch.setattr(answer_types, "_COUNT_OF_THINGS", re.compile(r""))  # control: any number counts
    assert answer_types.states_each([1], line, question)


RERAISE = evidence_under(
    "If you catch an exception using `except` in a dependency with `yield` and you don't raise it again (or raise a "
    "new exception), FastAPI won't be able to notice there was an exception, the same way that would happen with "
    "regular Python.\n\n"
    "### Always `raise` in Dependencies with `yield` and `except`\n\n"
    "If you catch an exception in a dependency with `yield`, unless you are raising another `HTTPException` or "
    "similar, **you should re-raise the original exception**.",
    "en/docs/tutorial/dependencies/dependencies-with-yield.md",
    ["Dependencies with yield", "Dependencies with yield and except"],
    start=118,
)


def test_asked_why_to_follow_advice_what_goes_wrong_without_it_answers(monkeypatch):
    """c5303 "Why should you re-raise an exception that you catch in a dependency with yield?" quoted the advice
    itself ("you should re-raise the original exception"), which holds every word of the question."""
    from kb_agent.agent import reasons

    question = "Why should you re-raise an exception that you catch in a dependency with yield?"
    assert reasons.advice_asked(question) == "re-raise" and reasons.advice_asked("Why is it slow?") is None
    assert "won't be able to notice" in _ranked(question, [RERAISE])[0]
    monkeypatch.setattr(reasons, "advice_asked", lambda question: None)  # control
    assert "should re-raise" in _ranked(question, [RERAISE])[0]
