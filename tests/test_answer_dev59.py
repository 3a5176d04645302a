"""The misses of the held-out sets dev58 and dev59 (`fastapi_docs_dev59.jsonl`) that the answer step owns: lists
under a line introducing them, a value of something else given for an unanswerable question, routing."""

from __future__ import annotations

import re

import pytest

from conftest import HashEmbedder, evidence_under, quoted_text, rare_weights, write
from kb_agent.agent import (
    answer_types,
    evidence_following,
    evidence_units,
    extractive,
    question_terms,
    quote_selection,
    reasons,
    synthesize,
)
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.rules import route_by_rules
from kb_agent.engine import Engine
from kb_agent.llm.scripted import ScriptedLLM
from kb_agent.text import tokenize
from test_agent_graph import ByRole, route

WEBSOCKET_PAGE = evidence_under(
    "### 尝试带有依赖项的 WebSockets { #try-the-websockets-with-dependencies }\n\n"
    "在浏览器中打开 [http://127.0.0.1:8000](http://127.0.0.1:8000)。\n\n"
    "在页面中，您可以设置：\n\n"
    '* "Item ID"，用于路径。\n'
    '* "Token"，作为查询参数。\n\n'
    "/// tip | 提示\n\n注意，查询参数 `token` 将由依赖项处理。\n\n///",
    "zh/docs/advanced/websockets.md",
    ["使用 WebSockets"],
    start=122,
)


def test_a_short_line_introducing_a_list_is_an_answer_line(monkeypatch):
    """dev59 z5905 "带依赖项的 WebSockets 示例页面中可以设置哪些内容？": "在页面中，您可以设置：" (10 characters)
    made no line of its own, so its list ("Item ID", "Token") was never quoted."""
    question = "带依赖项的 WebSockets 示例页面中可以设置哪些内容？"
    assert any(u.text == "在页面中，您可以设置：" for u in units_of(0, WEBSOCKET_PAGE))
    answer = quoted_text(question, [WEBSOCKET_PAGE])
    assert answer.startswith("在页面中，您可以设置：") and "Item ID" in answer and "Token" in answer
    # control: too short to count
    monkeypatch.setattr(evidence_units, "_items_below", lambda lines, at, deeper=True: False)
    assert not any(u.text == "在页面中，您可以设置：" for u in units_of(0, WEBSOCKET_PAGE))
    assert not quoted_text(question, [WEBSOCKET_PAGE]).startswith("在页面中")


CLIENT_TAGS = evidence_under(
    "### Generate a TypeScript Client with Tags { #generate-a-typescript-client-with-tags }\n\n"
    "If you generate a client for a FastAPI app using tags, it will normally also separate the client code based "
    "on the tags.\n\n"
    "This way, you will be able to have things ordered and grouped correctly for the client code:\n\n"
    "In this case, you have:\n\n"
    "* `ItemsService`\n"
    "* `UsersService`",
    "en/docs/advanced/generate-clients.md",
    ["Generating SDKs"],
    start=87,
)


def test_a_line_introducing_a_list_is_read_with_the_words_and_names_of_its_items(monkeypatch):
    """dev59 t5904 "Which client services do you get …?": "In this case, you have:" names the services only by
    its items; it was outranked by the example line `ItemsService.createItemItemsPost(…)`."""
    question = (
        "Which client services do you get when you generate a TypeScript client for a FastAPI app with items and "
        "users tags?"
    )
    weights = rare_weights({"servic": 5.0, "typescript": 4.0, "user": 3.5, "item": 3.0, "fastapi": 0.8})
    assert extractive.rank(question, [CLIENT_TAGS], weights=weights)[0].text == "In this case, you have:"
    monkeypatch.setattr(extractive, "list_after", lambda unit, evidence: [])  # control: the line alone
    assert extractive.rank(question, [CLIENT_TAGS], weights=weights)[0].text != "In this case, you have:"


COMPATIBLE = evidence_under(
    "## **FastAPI** 兼容性 { #fastapi-compatibility }\n\n"
    "依赖注入系统的简洁让 **FastAPI** 能与以下内容兼容：\n\n"
    "* 各类关系型数据库\n* NoSQL 数据库\n* 外部包\n* 外部 API\n* 认证与授权系统\n* API 使用监控系统\n"
    "* 响应数据注入系统\n* 等等...",
    "zh/docs/tutorial/dependencies/index.md",
    ["依赖项"],
    start=193,
)


def test_a_list_of_up_to_nine_short_names_is_quoted_with_its_line(monkeypatch):
    """dev59 z5902 "依赖注入系统让 FastAPI 能与哪些内容兼容？": the line was quoted without its eight items."""
    question = "依赖注入系统让 FastAPI 能与哪些内容兼容？"
    assert "NoSQL 数据库" in quoted_text(question, [COMPATIBLE])
    monkeypatch.setattr(evidence_following, "NAME_ITEMS", evidence_following.LIST_ITEMS)  # control: six at most
    assert "NoSQL" not in quoted_text(question, [COMPATIBLE])


def test_a_long_list_of_long_items_is_still_not_quoted():
    unit = units_of(0, COMPATIBLE)[0]
    longer = "以及许多其他可以通过依赖项注入的组件" * 3
    text = COMPATIBLE.text.replace("* 外部包", f"* 外部包，{longer}").replace("* 外部 API", f"* 外部 API，{longer}")
    long_items = COMPATIBLE.model_copy(update={"text": text})  # two long items: one may say more (dev68)
    assert evidence_following.list_after(unit, COMPATIBLE)
    assert evidence_following.list_after(units_of(0, long_items)[0], long_items) == []


EXAMPLES = evidence_under(
    "## `examples` in JSON Schema - OpenAPI { #examples-in-json-schema-openapi }\n\n"
    "When using any of:\n\n"
    "* `Path()`\n* `Query()`\n* `Header()`\n* `Cookie()`\n* `Body()`\n* `Form()`\n* `File()`\n\n"
    "you can also declare a group of `examples` with additional information that will be added to their "
    "**JSON Schemas** inside of **OpenAPI**.\n\n"
    "### `Body` with `examples` { #body-with-examples }\n\n"
    "Here we pass `examples` containing one example of the data expected in `Body()`:",
    "en/docs/tutorial/schema-extra-example.md",
    ["Declare Request Example Data"],
    start=43,
)


def test_a_sentence_its_list_breaks_is_quoted_whole(monkeypatch):
    """dev58 t5808 "Which functions let you declare a group of examples …?": "When using any of:" / the list /
    "you can also declare …" is one sentence; its end was read as the example's, the list never quoted."""
    question = (
        "Which functions let you declare a group of examples that are added to their JSON Schemas inside OpenAPI?"
    )
    lead = units_of(0, EXAMPLES)[0]
    assert lead.text == "When using any of:" and lead.tail.startswith("you can also declare")
    answer = quoted_text(question, [EXAMPLES])
    assert "When using any of:\n- `Path()`" in answer and "- `File()`\nyou can also declare" in answer
    monkeypatch.setattr(evidence_units, "_continued", lambda lead, cleaned: None)  # control: no tail
    assert "- `Query()`" not in quoted_text(question, [EXAMPLES])


def test_a_function_asked_for_may_be_a_capitalised_call():
    """FastAPI's parameter functions are written `Query()`: a name of the kind "function" asked for."""
    question = "Which functions let you declare a group of examples?"
    assert extractive.new_names("`Query()` and `Body()`", question, "function") == {"Query()", "Body()"}
    assert extractive.new_names("`BaseModel`", question, "function") == set()


TWICE = evidence_under(
    "Right now, the generated method names like `createItemItemsPost` don't look very clean:\n\n"
    "```TypeScript\n"
    'ItemsService.createItemItemsPost({name: "Plumbus", price: 5})\n'
    "```",
    "en/docs/advanced/generate-clients.md",
    ["Generating SDKs", "Client Method Names"],
    start=102,
)


def test_a_line_already_quoted_within_a_chosen_one_is_not_quoted_again(monkeypatch):
    """dev59 t5904's first answer quoted `ItemsService.createItemItemsPost(…)` twice: as the example the line
    before shows, then alone."""
    units = units_of(0, TWICE)
    shown = units[0]
    shown.text = f"{units[0].text} … `{units[1].text}`"
    assert quote_selection._quoted_within(units[1], shown)
    assert not quote_selection._quoted_within(shown, units[1])


BACKGROUND = evidence_under(
    "## Dependency Injection { #dependency-injection }\n\n"
    "Using `BackgroundTasks` also works with the dependency injection system, you can declare a parameter of type "
    "`BackgroundTasks` at multiple levels: in a *path operation function*, in a dependency (dependable), in a "
    "sub-dependency, etc.\n\n"
    "**FastAPI** knows what to do in each case and how to reuse the same object, so that all the background tasks "
    "are merged together and are run in the background afterwards:\n\n"
    "In this example, the messages will be written to the `log.txt` file *after* the response is sent.",
    "en/docs/tutorial/background-tasks.md",
    ["Background Tasks"],
    start=48,
)


def test_so_that_tells_what_happens(monkeypatch):
    """dev59 c5906 "What happens to background tasks declared at several levels …?": the line saying they "are
    merged together" was left out for two that restate the question."""
    question = (
        "What happens to background tasks declared at several levels, such as in dependencies and in the path "
        "operation function?"
    )
    weights = rare_weights({"background": 3.0, "task": 3.0, "declar": 3.0})

    def quoted() -> str:
        return " ".join(s.text for s in extractive.extractive_sentences(question, [BACKGROUND], weights=weights))

    assert "merged together" in quoted()
    monkeypatch.setattr(reasons, "_SO_THAT", re.compile(r"(?!)"))  # control
    assert "merged together" not in quoted()


def test_which_file_something_is_written_to_asks_the_content():
    """dev59 t5902 "… which file are the messages written to?" was answered with a list of pages."""
    assert route_by_rules("In the background tasks example, which file are the messages written to?") is None
    assert route_by_rules("Which file is the lifespan explained in?")[1] == "file_discovery"
    assert route_by_rules("Which page is about CORS?")[1] == "file_discovery"


def test_a_version_or_a_default_timeout_asked_by_a_longer_name():
    """dev59 u5902 "Which Hey API version …?" (two words before "version") and u5903 "… the default timeout …"
    were answered with lines stating no version and no number."""
    assert answer_types.asked_types("Which Hey API version does FastAPI require for generating clients?") == [0]
    assert answer_types.asked_types("What is the default timeout after which FastAPI cancels a task?") == [1]


DOCKERFILE = evidence_under(
    "COPY ./app /code/app\n\n"
    'CMD ["fastapi", "run", "app/main.py", "--port", "80"]\n\n'
    "# If running behind a proxy like Nginx or Traefik add --proxy-headers\n"
    '# CMD ["fastapi", "run", "app/main.py", "--port", "80", "--proxy-headers"]',
    "en/docs/deployment/docker.md",
    ["FastAPI in Containers - Docker", "What is a Container"],
    start=25,
)


def test_asked_the_port_of_a_named_thing_the_line_must_name_it(monkeypatch):
    """dev58 u5802 "Which port does the Traefik container listen on in the Docker guide?" (the guide names
    none) was answered with the app's `--port 80`, a comment below it naming Traefik as a proxy."""
    question = "Which port does the Traefik container listen on in the Docker guide?"
    assert extractive.port_owner(question) == "traefik"
    assert extractive.rank(question, [DOCKERFILE]) == []
    monkeypatch.setattr(extractive, "port_owner", lambda question: None)  # control
    assert extractive.rank(question, [DOCKERFILE])


CORS = evidence_under(
    "* `max_age` - Sets a maximum time in seconds for browsers to cache CORS responses. Defaults to `600`.",
    "en/docs/tutorial/cors.md",
    ["CORS (Cross-Origin Resource Sharing)", "Use `CORSMiddleware`"],
    start=65,
)


def test_asked_a_maximum_size_a_maximum_time_is_no_answer(monkeypatch):
    """dev58 u5801 "What is the maximum size of the content the Response class accepts?" (the docs give none)
    was answered with CORS's `max_age`."""
    question = "What is the maximum size of the content the CORS responses accept?"
    weights = rare_weights({"cor": 5.0, "maximum": 4.0, "respons": 1.0, "size": 3.0, "content": 3.0})
    assert answer_types.limit_of(question) == "size"
    assert extractive.rank(question, [CORS], weights=weights) == []
    monkeypatch.setattr(answer_types, "limit_of", lambda question: None)  # control
    assert extractive.rank(question, [CORS], weights=weights)


def test_a_prefix_in_the_dictionary_is_no_word(monkeypatch):
    """dev58 z5804 "Docker 指南在介绍容器镜像时举了哪些…" was refused: jieba glued 时举, which its dictionary holds
    only as the start of longer words (frequency 0), and no page writes."""
    question = "Docker 指南在介绍容器镜像时举了哪些官方数据库镜像作为例子？"
    assert tokenize.guessed_word("时举") and not tokenize.guessed_word("镜像")
    assert "时举" not in question_terms.key_terms(question)
    monkeypatch.setattr(question_terms, "guessed_word", lambda word: False)  # control
    assert "时举" in question_terms.key_terms(question + " ")  # (another string: key terms are cached per question)


RELEASES = """# Release Notes

## 0.74.1 (2022-02-21)

### Features

* ✨ Include route in scope to allow middleware and other tools to extract its information. PR #4603.
"""
MIDDLEWARE = """# Middleware

## Integrated middlewares

FastAPI provides several middlewares in `fastapi.middleware` just as a convenience for you, the developer.
"""


@pytest.mark.parametrize("guard", [True, False], ids=["typed_answer_checked", "control_any_stated_sentence"])
def test_a_model_answer_stating_no_value_of_the_kind_asked_gives_way_to_the_evidence(
    settings, tmp_path, monkeypatch, guard
):
    """dev57 x5704 "哪个版本把 route 放进 scope …?" was answered by the model "FastAPI 在 `fastapi.middleware` 中为
    开发者提供了几个中间件": a sentence the sources state, about the middleware the question names, giving no
    version. Asked for a version (a number, an address …), an answer stating none is no answer: the evidence
    sentences are quoted instead, and the model's sentence is kept in `claims` as off the question."""
    write(tmp_path / "docs" / "release-notes.md", RELEASES)
    write(tmp_path / "docs" / "middleware.md", MIDDLEWARE)
    if not guard:
        monkeypatch.setattr(synthesize, "asked_types", lambda question: [])
    script = ByRole(route=route(), synth="FastAPI provides several middlewares in `fastapi.middleware` [2].")
    question = "Which version included the route in the scope so that middleware can extract its information?"
    engine = Engine(settings, embedder=HashEmbedder(), llm=ScriptedLLM(script))
    try:
        engine.index([tmp_path / "docs"])
        answer = engine.answer_query(question)
    finally:
        engine.close()
    assert ("0.74.1" in answer.answer) is guard
    assert any("states no value of the kind" in n for n in answer.notices) is guard
    if guard:
        assert any(c.off_question and "several middlewares" in c.sentence for c in answer.claims)


TWO_RELEASES = evidence_under(
    "## 0.70.0 (2021-10-07)\n\n"
    "This release just upgrades Starlette to the latest version, `0.16.0`.\n\n"
    "* Next to FastAPI `0.69.0`, which upgrades Starlette to `0.15.0`, with AnyIO support.\n"
    "* Finally to FastAPI `0.70.0`, just upgrading Starlette to the latest version `0.16.0` with bug fixes.\n\n"
    "## 0.69.0 (2021-10-07)\n\n"
    "This release adds support for [Trio](https://trio.readthedocs.io/en/stable/). ✨",
    "en/docs/release-notes.md",
    ["Release Notes"],
    start=5726,
    title="Release Notes",
)


def test_a_release_given_a_name_from_the_question_must_say_it_in_its_own_section(monkeypatch):
    """dev57 x5701 "FastAPI 从哪个版本开始支持 Trio？": the model wrote "FastAPI 从 0.70.0 版本开始支持 Trio", cited to
    "Finally to FastAPI `0.70.0` …" - Trio is named a few lines below, in the 0.69.0 section."""
    from kb_agent.agent import claim_guards
    from kb_agent.agent.claims import ClaimChecker
    from kb_agent.agent.sentences import Sentence

    question = "FastAPI 从哪个版本开始支持 Trio？"
    checker = ClaimChecker([TWO_RELEASES], question)
    assert not checker.check(Sentence("FastAPI 从 0.70.0 版本开始支持 Trio。", [1])).supported
    assert checker.check(Sentence("This release adds support for Trio: 0.69.0.", [1])).supported
    monkeypatch.setattr(claim_guards.ClaimGuards, "_release_names", lambda self, sentence, restated, spans: True)
    assert (
        ClaimChecker([TWO_RELEASES], question).check(Sentence("FastAPI 从 0.70.0 版本开始支持 Trio。", [1])).supported
    )


def test_a_time_word_glued_to_a_modal_is_no_key_term(monkeypatch):
    """dev58 z5801 "用 with 语句读取文件时，with 代码块结束后会对文件做什么？" was refused: jieba cut "后会"
    (listed as a noun), which no page writes."""
    question = "用 with 语句读取文件时，with 代码块结束后会对文件做什么？"
    assert "后会" not in question_terms.key_terms(question)
    monkeypatch.setattr(question_terms, "_TIME_OR_PLACE", "")  # control
    assert "后会" in question_terms.key_terms(question + " ")


def test_a_short_english_line_introducing_a_list_is_a_line_of_its_own(monkeypatch):
    page = evidence_under("You can set:\n\n* The item ID, used in the path.\n* The token.", "en/docs/ws.md")
    assert units_of(0, page)[0].text == "You can set:"
    # control: 12 characters, too short for a line of its own
    monkeypatch.setattr(evidence_units, "_items_below", lambda lines, at, deeper=True: False)
    assert units_of(0, page)[0].text != "You can set:"


def test_an_exception_asked_for_is_named_as_one(monkeypatch):
    """With a list's names credited to the line introducing it, dev15 t1507 "What exception should a WebSocket
    endpoint raise instead of HTTPException?" opened with "In WebSocket endpoints you can import … and use:" /
    `Depends` / `Security` …: names of classes, none an exception."""
    question = "What exception should a WebSocket endpoint raise instead of HTTPException?"
    assert extractive.new_names("`Depends`, `Security`, `Cookie`", question, "exception") == set()
    assert extractive.new_names("we raise a `WebSocketException`", question, "exception") == {"WebSocketException"}
