"""Stop 66: what the held-out set dev65 showed - small talk the rules did not know, a thing asked as built in that
a line about some other thing of its kind answered, and "It provides …" quoted without what "it" is."""

from __future__ import annotations

import pytest

from conftest import evidence_under, quoted_text, write
from kb_agent.agent import quote_selection
from kb_agent.agent.included import asked_inclusion, inclusion_unstated
from kb_agent.agent.rules import is_chitchat, small_talk_reply


@pytest.mark.parametrize(
    "text",
    [
        "Good afternoon! Hope your day is going well.",  # h6501
        "Cheers, that clears it up for me.",  # h6503
        "你是谁开发的？",  # h6504
        "谁开发了你？",
        "Thanks, that makes sense now.",
        "明白了，原来如此，谢谢",
        "Who developed you?",
    ],
)
def test_small_talk_dev65(text):
    assert is_chitchat(text)


@pytest.mark.parametrize(
    "text",
    [
        "Who developed FastAPI?",
        "FastAPI 是谁开发的？",
        "Does that make sense for a cache?",
        "What does it clear up?",
        "Hope the day is going well with async tests: how do I run them?",
    ],
)
def test_questions_near_small_talk_stay_questions(text):
    assert not is_chitchat(text)


def test_who_developed_you_is_answered_with_who_kb_agent_is():
    assert "kb-agent" in small_talk_reply("你是谁开发的？", zh=True)


CELERY = evidence_under(
    "如果你需要执行繁重的后台计算，并且不一定需要由同一进程运行，那么使用其他更大的工具（如 Celery）可能更好。\n"
    "它们往往需要更复杂的配置，即消息/作业队列管理器，如RabbitMQ或Redis。",
    "zh/docs/tutorial/background-tasks.md",
    ["后台任务", "警告"],
    start=76,
)
GRAPHQL = evidence_under(
    "As **FastAPI** is based on the **ASGI** standard, it's very easy to integrate any **GraphQL** library also "
    "compatible with ASGI.\n\nHere are some of the **GraphQL** libraries that have **ASGI** support.",
    "en/docs/how-to/graphql.md",
    ["GraphQL"],
    start=3,
)
SERVER = evidence_under(
    "当你安装 FastAPI 时，它自带一个生产环境服务器——Uvicorn，并且你可以使用 `fastapi run` 命令来启动它。",
    "zh/docs/deployment/manually.md",
    ["手动运行服务器"],
    start=72,
)


@pytest.mark.parametrize(
    ("question", "sources", "unstated"),
    [
        ("FastAPI 内置的任务队列叫什么名字？", [CELERY], "任务队列"),  # dev65 u6503, answered with Celery
        ("FastAPI 内置的消息队列叫什么？", [CELERY], "消息队列"),  # u806
        ("Which GraphQL library comes built into FastAPI?", [GRAPHQL], "GraphQL library"),  # u4830
        ("安装 FastAPI 时自带的生产环境服务器是哪个？", [SERVER], None),  # z3206: the line says it comes with one
        ("Which GraphQL libraries have ASGI support?", [GRAPHQL], None),  # asks no built-in thing
    ],
)
def test_a_thing_asked_as_built_in_needs_a_line_saying_it_is_included(question, sources, unstated):
    assert inclusion_unstated(question, sources) == unstated


@pytest.mark.parametrize("rule", [True, False], ids=["refused", "control_quoted"])
def test_the_built_in_rule_refuses_where_the_quote_would_answer(engine, tmp_path, monkeypatch, rule):
    """dev65 u6503: without a model, the Celery line was quoted as FastAPI's built-in task queue. No line says a
    queue comes with it (the one saying 内置 names `BackgroundTasks`); the control switches the rule off and a
    line is quoted as the answer."""
    from kb_agent.agent import synthesize

    if not rule:
        monkeypatch.setattr(synthesize, "inclusion_unstated", lambda question, sources: None)
    write(
        tmp_path / "docs" / "background-tasks.md",
        "# FastAPI 后台任务\n\nFastAPI 内置了 `BackgroundTasks`，可以在返回响应之后运行任务。\n\n## 警告\n\n"
        "如果你需要执行繁重的后台计算，并且不一定需要由 FastAPI 的同一进程运行，"
        "那么使用其他更大的任务队列工具（如 Celery）可能更好。\n\n"
        "它们往往需要更复杂的配置，即消息/作业队列管理器，如 RabbitMQ 或 Redis。\n",
    )
    engine.index([tmp_path / "docs"], kb="docs")
    answer = engine.answer_query("FastAPI 内置的任务队列叫什么名字？", kbs=["docs"])
    assert answer.refused is rule  # the control quotes a line on some task tool as the built-in queue's name


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("Which ORM does FastAPI ship with by default?", "ORM"),
        ("What server comes with FastAPI?", "server"),
        ("How do I enable FastAPI's built-in rate limiting middleware?", "rate limiting middleware"),
        ("Which is the best server?", None),
    ],
)
def test_the_thing_asked_as_built_in(question, thing):
    assert asked_inclusion(question) == thing


LETS_ENCRYPT = evidence_under(
    "## Let's Encrypt { #lets-encrypt }\n\n"
    "Before Let's Encrypt, these **HTTPS certificates** were sold by trusted third parties.\n\n"
    "But then **[Let's Encrypt](https://letsencrypt.org/)** was created.\n\n"
    "It is a project from the Linux Foundation. It provides **HTTPS certificates for free**, in an automated way.",
    "en/docs/deployment/https.md",
    ["About HTTPS"],
    start=46,
)


@pytest.mark.parametrize("rule", [True, False], ids=["with_its_name", "control_without"])
def test_an_it_line_answering_which_project_comes_with_the_name(monkeypatch, rule):
    """dev65 t6508 "Which project made it possible to get HTTPS certificates for free?" was answered "It provides
    HTTPS certificates for free" without saying what "it" is."""
    if not rule:  # (since stop 67 the best "It …" line also comes with the line naming it: both switched off)
        monkeypatch.setattr(quote_selection, "_with_its_name", lambda question, chosen, sources: chosen)
        monkeypatch.setattr(quote_selection, "named_by_it", lambda unit, units: None)
    answer = quoted_text("Which project provides free HTTPS certificates?", [LETS_ENCRYPT])
    assert "It provides" in answer
    assert ("was created" in answer) is rule


@pytest.mark.parametrize(
    ("text", "zh"), [("got it", False), ("Sounds good, that makes sense", False), ("明白了", True), ("收到", True)]
)
def test_an_acknowledgement_is_answered_as_one(text, zh):
    """ "got it" had been answered "Hello! I'm kb-agent …", as a greeting; a greeting, thanks and "who are you" keep
    their replies (the control cases below)."""
    assert is_chitchat(text)
    assert small_talk_reply(text, zh) in (
        "Glad that helps! Ask me anything else about the indexed documents.",
        "好的！还有关于文档的问题可以继续问我。",
    )


@pytest.mark.parametrize(
    ("text", "start"),
    [("Nice to meet you", "Hello!"), ("Thanks, got it", "You're welcome"), ("who are you", "Hello!"), ("hi", "Hello!")],
)
def test_greetings_and_thanks_keep_their_replies(text, start):
    assert small_talk_reply(text, False).startswith(start)
