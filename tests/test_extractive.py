"""Extractive answers read a line as its section reads it: the headings it sits under say what the line is
about when the line does not ("Add the package to your project:" under "Install `pydantic-settings`")."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under
from kb_agent.agent import (
    answer_types,
    asked_means,
    evidence_following,
    evidence_sections,
    evidence_units,
    extractive,
    question_terms,
    quote_selection,
)
from kb_agent.agent.claims import ClaimChecker
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.tools.base import Evidence

DOCKERFILE_STEPS = """5. Copy the `./app` directory inside the `/code` directory.

    So, it's important to put this **near the end**, to optimize the container image build times.

6. Set the **command** to use `fastapi run`, which uses Uvicorn underneath.
"""
FIRST_STEPS = """The command `fastapi dev` reads your `main.py` file, detects the app in it, and starts a server.
"""
SETTINGS = """Pydantic provides a great utility to handle these settings coming from environment variables.

### Install `pydantic-settings` { #install-pydantic-settings }

Add the `pydantic-settings` package to your project:

### Create the `Settings` object { #create-the-settings-object }

Import `BaseSettings` from Pydantic and create a sub-class, very much like with a Pydantic model.
"""


_evidence = evidence_under


# the terms' rarity in the FastAPI docs (BM25 document frequencies), as the engine passes them
RARITY = {"dockerfil": 4.4, "command": 3.6, "start": 2.7, "exampl": 1.8, "app": 1.7}
RARITY |= {"sent": 3.6, "after": 3.1, "run": 2.2, "respons": 1.8, "code": 1.8}


def _weights(asked: set[str]) -> dict[str, float]:
    return {t: RARITY.get(t, 2.0) for t in asked}


def _answer(question: str, sources: list[Evidence]) -> str:
    return " ".join(s.text for s in extractive_sentences(question, sources, max_sentences=1, weights=_weights))


def test_a_line_is_read_under_the_headings_of_its_passage(monkeypatch):
    """The Dockerfile's numbered notes never say "Dockerfile": their section heading does. Without it the
    answer was the first-steps page's `fastapi dev` line, which says "command" and "starts"."""
    import kb_agent.agent.extractive as extractive

    question = "What command does the Dockerfile example use to start the app?"
    sources = [
        _evidence(DOCKERFILE_STEPS, "docker.md", ["FastAPI in Containers - Docker", "Dockerfile { #dockerfile }"]),
        _evidence(FIRST_STEPS, "index.md", ["FastAPI", "Run it"]),
    ]
    answer = _answer(question, sources)
    assert "fastapi run" in answer
    sentences = extractive_sentences(question, sources, max_sentences=1, weights=_weights)
    assert sentences and all(ClaimChecker(sources, question).check(s).supported for s in sentences)  # quoted, so kept
    monkeypatch.setattr(extractive, "HEADING", 0.0)  # control: a line is read alone
    assert "fastapi run" not in _answer(question, sources)


def test_a_heading_inside_the_passage_replaces_the_one_it_follows(monkeypatch):
    """ "Add the package to your project:" is under "Install `pydantic-settings`" (a heading in the passage),
    the `BaseSettings` line under the next heading at the same level, not under both."""
    import kb_agent.agent.extractive as extractive

    sources = [_evidence(SETTINGS, "settings.md", ["Settings and Environment Variables", "Pydantic `Settings`"])]
    units = evidence_units.units_of(0, sources[0])
    headings = {u.text: u.heading for u in units}
    assert headings["Add the `pydantic-settings` package to your project:"].endswith(
        "Pydantic `Settings` Install `pydantic-settings`"
    )
    assert "Install" not in headings[next(t for t in headings if t.startswith("Import"))]
    question = "Which package provides BaseSettings for reading settings from environment variables?"
    assert "pydantic-settings" in _answer(question, sources)
    monkeypatch.setattr(extractive, "HEADING", 0.0)  # control: the line alone holds too few of the terms
    assert "pydantic-settings" not in _answer(question, sources)


RELEASE_NOTE = """## 0.118.0 (2025-09-29)

Before FastAPI 0.118.0, if you used a dependency with `yield`, it would run the exit code after the *path \
operation function* returned but right before sending the response.
"""
BACKGROUND_TASKS = """# Background Tasks { #background-tasks }

You can define background tasks to be run *after* returning a response.
"""


def test_asked_how_a_line_that_offers_a_way_beats_a_history_of_it(monkeypatch):
    """ "How can I run code after the response has been sent?" The release notes say more of its words (code,
    sent) but recount what changed; the tutorial line offers the way ("You can define background tasks")."""
    import kb_agent.agent.extractive as extractive

    question = "How can I run code after the response has been sent?"
    sources = [  # in the order search ranked them
        _evidence(BACKGROUND_TASKS, "background-tasks.md", ["Background Tasks"]),
        _evidence(RELEASE_NOTE, "release-notes.md", ["Release Notes"]),
    ]
    assert _answer(question, sources).startswith("You can define background tasks")
    # an introduction ("If you use PyCharm, you can:") and a restriction ("you can only") offer no way
    assert asked_means.ASKS_MEANS.search("如何禁用自动转换？") and not asked_means.ASKS_MEANS.search("How many?")
    monkeypatch.setattr(extractive, "MEANS_BONUS", 0.0)  # control: the words alone pick the release note
    assert "background tasks" not in _answer(question, sources)


SERVER = """# Serving

## Production mode

Running the serve command starts the production server.

By default, reloading is disabled. It also listens on the IP address `0.0.0.0`, so other machines reach it.
"""


def test_asked_for_an_ip_address_a_line_holding_one_is_an_answer(monkeypatch):
    """ "Which IP address …" asks for an address: `0.0.0.0` is one, though it is neither a URL nor a path
    (dev8's e801 was refused over the line that says it)."""
    import re

    question = "Which IP address does the serve command listen on by default?"
    evidence = [_evidence(SERVER, "serving.md", ["Serving"])]
    assert "0.0.0.0" in " ".join(s.text for s in extractive_sentences(question, evidence))
    url_or_path = re.compile(r"https?://|(?<![\w])/[\w.-]+")  # control: the address shape before the fix
    shapes = [(asks, url_or_path if asks.pattern.startswith(r"\b(?:which|what) (?:\w+ ){0,2}(?:url") else shape)
              for asks, shape in answer_types.ANSWER_TYPES]  # fmt: skip
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", shapes)
    assert extractive_sentences(question, evidence) == []


CONSOLE = """# Run it

```console
$ fastapi dev main.py
╭────────── FastAPI CLI - Development mode ───────────╮
│  Serving at: http://127.0.0.1:8000                  │
│  API docs: http://127.0.0.1:8000/docs               │
╰─────────────────────────────────────────────────────╯
INFO:     Started server process [2248757]
INFO:     Waiting for application startup.
```
"""


@pytest.mark.parametrize("rule", [True, False], ids=["console_skipped", "control_console_read"])
def test_a_terminal_transcripts_frame_and_log_lines_are_no_answers(monkeypatch, rule):
    """Asked how many days a (non-existent) queue keeps messages, the box and log lines of a `fastapi dev`
    transcript were quoted for their numbers (blind set's bl22, once the answer read eight passages)."""
    import re

    if not rule:
        monkeypatch.setattr(evidence_units, "_CONSOLE", re.compile(r"(?!)"))
    texts = [u.text for u in evidence_units.units_of(0, _evidence(CONSOLE, "run.md", ["Run it"]))]
    assert (texts == ["$ fastapi dev main.py"]) is rule
    assert any("INFO:" in t for t in texts) is not rule


TESTIMONIAL = """"_It is **beautifully designed** and **simple to use**._"

<div style="text-align: right; margin-right: 10%;">Deon Pillsbury - <strong>Cisco</strong> <a href="https://www.linkedin.com/posts/deonpillsbury_cisco-cx-python-activity"><small>(ref)</small></a></div>

```html
<p class="item">Item ID: 42</p>
```
"""


@pytest.mark.parametrize("rule", [True, False], ids=["markup_skipped", "control_markup_read"])
def test_a_block_of_page_html_showing_a_few_words_is_no_answer(monkeypatch, rule):
    """dev21 t2114 with the model: a testimonial's attribution `<div …>Deon Pillsbury - Cisco (ref)</div>` was
    kept as an answer sentence, markup and all. The same markup in an example stays: it is what is shown."""
    if not rule:
        monkeypatch.setattr(evidence_units, "_markup", lambda line: False)
    texts = [u.text for u in evidence_units.units_of(0, _evidence(TESTIMONIAL, "index.md", ["FastAPI"]))]
    assert any("Pillsbury" in t for t in texts) is not rule
    assert any(t.startswith('<p class="item">Item ID: 42') for t in texts)
    assert any("beautifully designed" in t for t in texts)


SWAGGER_ZH = """# 配置 Swagger UI { #configure-swagger-ui }

## 禁用语法高亮 { #disable-syntax-highlighting }

比如，你可以禁用 Swagger UI 中的语法高亮。

但是你可以通过设置 `syntaxHighlight` 为 `False` 来禁用它：
"""


def test_asked_how_the_line_naming_the_means_beats_the_one_restating_the_question(monkeypatch):
    """ "如何禁用 Swagger UI 的语法高亮？" was answered "比如，你可以禁用 Swagger UI 中的语法高亮。" - the
    question restated. The answer names the setting, though its line ends by introducing the example."""
    import kb_agent.agent.extractive as extractive

    question = "如何禁用 Swagger UI 的语法高亮？"
    sources = [_evidence(SWAGGER_ZH, "zh/configure-swagger-ui.md", ["配置 Swagger UI { #configure-swagger-ui }"])]
    assert "syntaxHighlight" in _answer(question, sources)
    # asked yes or no, the restatement is the answer
    assert "比如" in _answer("可以禁用 Swagger UI 的语法高亮吗？", sources)
    monkeypatch.setattr(extractive, "_restates", lambda *args: False)  # control: neither rule
    monkeypatch.setattr(extractive, "new_code", lambda *args: False)
    monkeypatch.setattr(asked_means, "new_code", lambda *args: False)
    assert "syntaxHighlight" not in _answer(question, sources)


CALLBACKS = """# OpenAPI Callbacks { #openapi-callbacks }

Let's first see how the normal API app would look before adding the callback.

The process that happens when your API app calls the *external API* is named a "callback".
"""


def test_asked_what_a_word_is_the_line_defining_it_comes_first(monkeypatch):
    import kb_agent.agent.extractive as extractive

    question = "What is a callback in OpenAPI callbacks?"
    sources = [_evidence(CALLBACKS, "openapi-callbacks.md", ["OpenAPI Callbacks { #openapi-callbacks }"])]
    assert "external API" in _answer(question, sources)
    monkeypatch.setattr(extractive, "DEFINES_BONUS", 0.0)  # control: the first line says the words as well
    assert "external API" not in _answer(question, sources)


PROXIES = """Some of the tools you could use as a TLS Termination Proxy are:

* Traefik
    * Automatically handles certificate renewals ✨
* Nginx
    * With an external component like Certbot for certificate renewals
"""


def test_a_sub_item_is_read_with_the_short_item_it_describes(monkeypatch):
    """ "* Traefik" / "    * Automatically handles certificate renewals": the sub-item alone names no proxy."""
    import kb_agent.agent.extractive as extractive

    source = _evidence(PROXIES, "concepts.md", ["Deployments Concepts"])
    texts = [u.text for u in evidence_units.units_of(0, source)]
    assert "Traefik: Automatically handles certificate renewals ✨" in texts
    sentence = next(s for s in extractive_sentences("Which proxy handles renewals automatically?", [source]))
    claim = ClaimChecker([source], "Which proxy handles renewals automatically?").check(sentence)
    assert claim.supported and "Traefik" in sentence.text  # the two lines state it together
    # asked which ones, the items that name one come before a paragraph that says more of the question's words
    renewals = _evidence(
        "Otherwise you might have to stop the TLS Termination Proxy momentarily to handle the certificate renewals.",
        "https.md",
        ["About HTTPS"],
    )
    which = "Which TLS termination proxies handle certificate renewals automatically?"
    assert "Traefik" in _answer(which, [renewals, source])
    # control: the label counts for nothing (and the list is read without the line introducing it, whose
    # "TLS Termination Proxy" the items are read under)
    monkeypatch.setattr(extractive, "NAME_BONUS", 0.0)
    bare = _evidence(PROXIES.split("\n", 2)[2], "concepts.md", ["Deployments Concepts"])
    assert "Traefik" not in _answer(which, [renewals, bare])
    monkeypatch.setattr(evidence_units, "_SHORT_PARENT", 0)  # control: the sub-item alone
    assert "Automatically handles certificate renewals ✨" in [u.text for u in evidence_units.units_of(0, source)]


DATACLASS_VERSION = """想了解更多，请查看 Pydantic 的文档。

## 版本 { #version }

自 FastAPI 版本 `0.67.0` 起可用。🔖
"""


def test_a_translated_heading_keeps_its_anchor_words(monkeypatch):
    """ "dataclasses 从 FastAPI 哪个版本开始支持？": the Chinese page's heading says 使用数据类, its anchor
    #using-dataclasses says the word the question uses."""

    question = "dataclasses 从 FastAPI 哪个版本开始支持？"
    source = _evidence(DATACLASS_VERSION, "zh/dataclasses.md", ["使用数据类 { #using-dataclasses }"], start=84)
    assert evidence_sections.heading_text("## 版本 { #version }") == "版本 (version)"
    assert evidence_sections.heading_text("## Version { #version }") == "Version"

    def answer() -> str:  # "dataclasses" is rare, "FastAPI" everywhere
        rare = {"dataclass": 5.0, "fastapi": 0.1}
        found = extractive_sentences(question, [source], weights=lambda asked: {t: rare.get(t, 2.0) for t in asked})
        return " ".join(s.text for s in found)

    assert "0.67.0" in answer()
    monkeypatch.setattr(evidence_sections, "_ANCHOR_WORDS", re.compile(r"(?!)"))  # control: the anchor dropped
    assert "0.67.0" not in answer()


TASKS_ZH = """**FastAPI** 知道在每种情况下该做什么以及如何复用同一对象，因此所有后台任务被合并在一起并且随后在后台运行。

首先导入 `BackgroundTasks` 并在 *路径操作函数* 中使用类型声明 `BackgroundTasks` 定义一个参数。
"""


def test_asked_which_class_the_name_the_knowledge_base_writes_everywhere_is_no_answer(monkeypatch):
    """ "FastAPI" (in most passages of the FastAPI docs: a low rarity) names the docs' subject; the class that
    runs background tasks is `BackgroundTasks`."""

    question = "在后台运行任务要使用哪个类？"
    rarity = {"fastapi": 0.9}

    def weights(asked: set[str]) -> dict[str, float]:
        return {t: rarity.get(t, 2.5) for t in asked}

    sources = [_evidence(TASKS_ZH, "zh/background-tasks.md", ["后台任务", "使用 `BackgroundTasks`"])]

    def best() -> str:
        return extractive_sentences(question, sources, max_sentences=1, weights=weights)[0].text

    assert "BackgroundTasks" in best()
    monkeypatch.setattr(question_terms, "SUBJECT_NAME", -1.0)  # control: every name counts, FastAPI's too
    assert best().startswith("**FastAPI**")


QUERY_MODELS = """This is supported since FastAPI version `0.115.0`.
"""
PYTHON_VERSIONS = """Support for Python 3.7 was dropped in FastAPI version `0.104.0`.
"""


def test_asked_which_version_removed_a_feature_a_line_about_its_start_is_no_answer(monkeypatch):
    """ "Which FastAPI version removed support for query parameter models?" (a false premise) had been answered
    "This is supported since FastAPI version `0.115.0`"."""

    sources = [
        _evidence(QUERY_MODELS, "query-param-models.md", ["Query Parameter Models"]),
        _evidence(PYTHON_VERSIONS, "release-notes.md", ["Release Notes"]),
    ]
    assert _answer("Which FastAPI version removed support for query parameter models?", sources) == ""
    assert "0.104.0" in _answer("Which FastAPI version dropped support for Python 3.7?", sources)
    kinds = answer_types.ANSWER_TYPES  # control: an end is not asked for, any version line does
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", [*kinds[:3], (kinds[3][0], re.compile("")), *kinds[4:]])
    assert "0.115.0" in _answer("Which FastAPI version removed support for query parameter models?", sources)


EXTRA_SCHEMA = """It includes the `tags`, `parameters`, `requestBody`, `responses`, etc.

If you only need to declare additional responses, a more convenient way to do it is with Additional Responses.

You can extend the OpenAPI schema for a *path operation* using the parameter `openapi_extra`.
"""
MORE_RESPONSES = "You can pass to your *path operation decorators* a parameter `responses`.\n"


def test_a_name_the_question_writes_as_a_plain_word_is_an_answer_where_the_line_gives_it_as_the_kind(monkeypatch):
    import kb_agent.agent.extractive as extractive

    question = "Which path operation decorator parameter lets me declare additional responses for the OpenAPI docs?"
    sources = [
        _evidence(EXTRA_SCHEMA, "path-operation-advanced-configuration.md", ["OpenAPI Extra"]),
        _evidence(MORE_RESPONSES, "additional-responses.md", ["Additional Responses in OpenAPI"]),
    ]
    assert _answer(question, sources).startswith("You can pass to your *path operation decorators* a parameter")
    monkeypatch.setattr(extractive, "_names_kind_in_question_words", lambda text, question, kind: False)  # control
    assert not _answer(question, sources).startswith("You can pass")


BODY_KEYS = """In this case, **FastAPI** will notice that there is more than one body parameter in the function.

So, it will then use the parameter names as keys (field names) in the body, and expect a body like:
"""
EMBED = "And you can instruct **FastAPI** to embed the body in a key even when there is only a single parameter.\n"


def test_asked_how_the_framework_behaves_a_line_offering_the_user_a_way_gets_no_bonus(monkeypatch):
    """ "How does FastAPI name the keys …?" asks what it does; "you can instruct FastAPI to …" offers a way and
    had won on the how-question's bonus for ways."""

    question = "How does FastAPI name the keys of the body when a path operation has two body parameters?"
    sources = [
        _evidence(EMBED, "body-multiple-params.md", ["Body - Multiple Parameters", "Embed a single body parameter"]),
        _evidence(BODY_KEYS, "body-multiple-params.md", ["Body - Multiple Parameters", "Multiple body parameters"]),
    ]
    assert "parameter names as keys" in _answer(question, sources)
    old = re.compile(r"^\s*how (?:can|could|do|does|should|would|to)\b", re.I)
    monkeypatch.setattr(asked_means, "ASKS_MEANS", old)
    assert "embed the body" in _answer(question, sources)  # control: the old reading of "how does"


PR = "PR [#{n}](https://github.com/fastapi/fastapi/pull/{n}) by [@tiangolo](https://github.com/tiangolo)."
FRONTEND_NOTES = f"""## Latest Changes

* ✨ Add `app.frontend()` to serve frontend apps. {PR.format(n=15800)}
* 📝 Add `app.frontend()` instructions to Agent Library Skill. {PR.format(n=15805)}
"""


def test_a_pull_request_number_is_no_size_a_line_states(monkeypatch):
    """dev11 u1103 (app.frontend() 支持的最大文件大小是多少？, never said): release-note lines about app.frontend()
    were quoted as the answer to "how big" - their only numbers were PR numbers. Control: with PR numbers
    read as values the lines are quoted again."""
    from kb_agent.agent import extractive

    question = "app.frontend() 支持的最大文件大小是多少？"
    notes = [_evidence(FRONTEND_NOTES, "release-notes.md", ["Release Notes"], 320)]
    assert extractive_sentences(question, notes) == []
    monkeypatch.setattr(extractive, "_CHANGELOG_ENTRY", re.compile(r"(?!x)x"))  # this guard alone
    assert extractive_sentences(question, notes) == []
    monkeypatch.setattr(answer_types, "_REFERENCES", re.compile(r"(?!x)x"))
    assert extractive_sentences(question, notes)
    sized = [_evidence("The largest file `app.frontend()` serves is 10 MB.", "frontend.md", ["Frontend"])]
    assert extractive_sentences(question, sized)  # a line that states a size is an answer


RATE_NOTES = f"""## 0.96.1

* 👷 Add custom token to Smokeshow and Preview Docs, to prevent API rate limits. {PR.format(n=9646)}
* 👷 Add custom tokens for GitHub Actions to avoid rate limits. {PR.format(n=9647)}
"""


def _rate_rarity(asked: set[str]) -> dict[str, float]:
    """As in the FastAPI docs: "rate" and "limit" are rare, "configure" and "FastAPI" everywhere."""
    return {t: 5.0 if t.startswith(("rate", "limit")) else 0.5 for t in asked}


def test_a_change_log_entry_answers_only_a_question_about_changes(monkeypatch):
    """u901 (How do I configure FastAPI's built-in rate limiter?, never said) was answered with release-note
    entries about GitHub rate limits once the fusion weights moved. An entry (a line ending by naming its PR)
    answers when / which version / what was added or changed; control: the same entries for a question about
    what was added, and with the rule off."""
    from kb_agent.agent import extractive

    notes = [_evidence(RATE_NOTES, "release-notes.md", ["Release Notes", "0.96.1"], 4428)]
    how = "How do I configure FastAPI's built-in rate limiter?"
    assert extractive_sentences(how, notes, weights=_rate_rarity) == []
    assert extractive_sentences("What was added to avoid GitHub Actions rate limits?", notes, weights=_rate_rarity)
    monkeypatch.setattr(extractive, "_CHANGELOG_ENTRY", re.compile(r"(?!x)x"))
    assert extractive_sentences(how, notes, weights=_rate_rarity)


EVENT_LOOP = """FastAPI will make sure it's run correctly so that it doesn't block the event loop.

To avoid blocking the event loop, declare the *path operation function* with regular `def` instead of `async def`.
"""


def _loop_rarity(asked: set[str]) -> dict[str, float]:
    """As in the FastAPI docs: "gevent" on one page, "event" and "loop" on dozens, "FastAPI" everywhere."""
    return {t: {"gevent": 4.0, "event": 2.5, "loop": 2.5, "app": 1.0}.get(t, 0.5) for t in asked}


def test_a_rare_name_the_question_asks_about_must_be_in_the_evidence(monkeypatch):
    """dev12 u1204 (How do I make Gevent the event loop of a FastAPI app?, never said) was answered with three
    lines about not blocking the event loop: they held most of its words by weight, not Gevent. The rarest key
    term, when the question names it, must be held by a passage found. Controls: the rule off; a passage that
    names it; a name the knowledge base never writes (a misspelling) is no reason to refuse; the rarest term a
    plain word (a paraphrase may not use it) is none either."""
    from kb_agent.agent import coverage

    question = "How do I make Gevent the event loop of a FastAPI app?"
    found = [_evidence(EVENT_LOOP, "stream-data.md", ["Stream Data"], 90)]
    assert coverage.missing_name(question, found, _loop_rarity) == "Gevent"
    assert not coverage.covers(question, found, _loop_rarity)
    monkeypatch.setattr(coverage, "_missing_name", lambda *args: None)
    assert coverage.covers(question, found, _loop_rarity)  # the control: the event-loop lines cover the rest
    monkeypatch.undo()
    named = [*found, _evidence("You could have used threads or Gevent.", "async.md", ["Async"], 384)]
    assert coverage.missing_name(question, named, _loop_rarity) is None
    assert coverage.missing_name(question, found, _loop_rarity, held=lambda names: set()) is None
    assert coverage.missing_name(question, found, _loop_rarity, held=lambda names: set(names)) == "Gevent"
    plain = "How do I make the event loop reentrant in a FastAPI app?"  # "reentrant": the rarest, no name
    assert (
        coverage.missing_name(plain, found, lambda asked: {t: 6.0 if t == "reentrant" else 1.0 for t in asked}) is None
    )
    assert coverage.missing_name("How do I set up a keep-alive ping?", found) is None  # hyphenated: prose


def test_a_digit_inside_a_name_is_no_number_a_line_states(monkeypatch):
    """dev12 u1203 (FastAPI 的作者花了多少钱研究 OpenAPI 规范？ - how much money, never said) was answered with
    "I spent several months studying OpenAPI, JSON Schema, OAuth2 …": the 2 of OAuth2 passed for the number
    asked for. Controls: any digit counting as a number again; a line with a number of its own."""

    question = "FastAPI 的作者花了多少钱研究 OpenAPI 规范？"
    studied = "因此，甚至在开发 **FastAPI** 前，我就花了几个月的时间研究 OpenAPI、JSON Schema、OAuth2 等规范。"
    assert extractive_sentences(question, [_evidence(studied, "history.md", ["历史"], 39)]) == []
    asks_number, number = answer_types.ANSWER_TYPES[1]
    any_digit = re.compile(number.pattern.replace("(?<![A-Za-z_])", ""), re.I)
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", [(asks_number, any_digit)])
    assert extractive_sentences(question, [_evidence(studied, "history.md", ["历史"], 39)])
    monkeypatch.undo()
    paid = "FastAPI 的作者花了 500 美元研究 OpenAPI 规范。"
    assert extractive_sentences(question, [_evidence(paid, "history.md", ["历史"], 39)])


PYDANTIC_NOTE = "* ✨ Add support for Pydantic's 2.7 query parameter models, remove the old models' URL from errors."


def test_asked_for_one_products_version_another_products_version_is_no_answer(monkeypatch):
    """With eight passages read, dev10 u1002 (Which FastAPI version removed support for query parameter models?,
    never said) was answered with a release note giving Pydantic's 2.7. Controls: asked for Pydantic's version
    the same line answers; a line giving FastAPI's own version answers."""
    notes = [_evidence(PYDANTIC_NOTE, "release-notes.md", ["Release Notes", "Latest Changes"], 3270)]
    assert extractive_sentences("Which FastAPI version removed support for query parameter models?", notes) == []
    asked_pydantic = "Which Pydantic version added support for query parameter models?"
    assert extractive_sentences(asked_pydantic, notes)
    own = [_evidence("Support for query parameter models was removed in FastAPI 0.200.0.", "notes.md", ["Notes"], 9)]
    assert extractive_sentences("Which FastAPI version removed support for query parameter models?", own)
    from kb_agent.agent import extractive

    monkeypatch.setattr(answer_types, "_foreign_versions", lambda text, question: text)  # control: the rule off
    # (and the asked owner's name near the line, a second guard since stop 39, off too)
    monkeypatch.setattr(extractive, "version_owner", lambda text: None)
    assert extractive_sentences("Which FastAPI version removed support for query parameter models?", notes)


def test_a_chinese_question_asking_which_port_needs_a_line_with_a_number(monkeypatch):
    """dev5 dv18 (FastAPI 自带的 GraphQL 订阅服务器默认监听哪个端口？, never said) was answered with a line about
    GraphQL and ASGI once more passages were read: "which port" needed a number in English only. Control: a
    line that states a port answers."""
    graphql = "FastAPI 自带的 GraphQL 订阅服务器默认监听 ASGI 连接。"
    question = "FastAPI 自带的 GraphQL 订阅服务器默认监听哪个端口？"
    assert extractive_sentences(question, [_evidence(graphql, "graphql.md", ["GraphQL"], 3)]) == []
    port = "FastAPI 自带的 GraphQL 订阅服务器默认监听 8000 端口。"
    assert extractive_sentences(question, [_evidence(port, "graphql.md", ["GraphQL"], 3)])

    asks, shape = answer_types.ANSWER_TYPES[1]
    english_only = re.compile(asks.pattern.replace("|(?:哪个|什么)端口", ""), re.I)
    monkeypatch.setattr(answer_types, "ANSWER_TYPES", [english_only and (english_only, shape)])  # control
    assert extractive_sentences(question, [_evidence(graphql, "graphql.md", ["GraphQL"], 3)])


UVICORN_ZH = """“服务器”一词通常用于指远程计算机以及在该计算机上运行的程序（例如 Uvicorn）。
这些都是指某种类型的远程计算机。
Uvicorn 是一个基于 uvloop 与 httptools 构建的极速 ASGI 服务器。"""


@pytest.mark.parametrize("rule", [True, False], ids=["kind_frames", "control_kind_is_a_term"])
def test_asked_what_kind_of_thing_something_is_the_line_defining_it_answers(monkeypatch, rule):
    """dev13 x1302 (Uvicorn 是什么类型的服务器？) was answered with lines about the word 服务器 and "某种类型的"
    computers: they held 类型, the definition "Uvicorn 是一个…ASGI 服务器" did not. The kind frames the question
    (what kind of ...?), and a line saying what the thing is (X 是一个 …, X is a …) defines it."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(extractive, "KIND_OF", re.compile(r"(?!)"))
        monkeypatch.setattr(question_terms, "KIND_OF", re.compile(r"(?!)"))
    sources = [_evidence(UVICORN_ZH, "alternatives.md", ["Alternatives"], 463)]
    # (the control: 类型 is a key term the lines about "某种类型的" computers hold; 什么类型 no longer reads as
    # asking for a class - dev51 z5101 - so the definition answers either way)
    assert ("类型" in question_terms.key_terms("Uvicorn 是什么类型的服务器？")) is not rule
    if rule:
        assert "ASGI" in _answer("Uvicorn 是什么类型的服务器？", sources)
        english = [
            _evidence("A server is a remote machine of some type.\nUvicorn is a fast ASGI server.", "a.md", ["A"])
        ]
        assert "ASGI" in _answer("What type of server is Uvicorn?", english)


FLASK_ZH = """FastAPI 是一个用于构建 API 的现代、快速（高性能）的 Web 框架，使用 Python 并基于标准的 Python 类型提示。
Flask 是一个“微框架”，它不包含数据库集成，也没有像 Django 那样的许多默认内建功能。"""


@pytest.mark.parametrize("rule", [True, False], ids=["quoted_kind_names", "control_subject_names"])
def test_asked_what_something_is_called_the_quoted_kind_answers(monkeypatch, rule):
    """dev51 z5101 (Flask 被称为什么类型的框架？) was answered with "FastAPI 是一个 … Web 框架 … 类型提示": 什么类型
    read as asking for a class (类), and the line's subject (FastAPI) counted as the name it gives. What a thing
    is called is the quoted word it is said to be ("Flask 是一个"微框架""), not the subject of another line."""
    from kb_agent.agent import definitions, extractive, name_kinds

    assert name_kinds.asked_kind("Flask 被称为什么类型的框架？") is None
    assert name_kinds.asked_kind("哪个类处理请求？") == "类"
    fastapi_line, flask_line = FLASK_ZH.split("\n")
    asked = {"flask", "框架", "称为", "类型"}
    assert not definitions.gives_name(fastapi_line, asked) and definitions.gives_name(flask_line, asked)
    assert definitions.gives_name('Flask is a "microframework".', {"flask"})
    if not rule:  # control: 什么类型 read as asking for a class, a line's subject as the name it gives
        monkeypatch.setattr(extractive, "asked_kind", lambda question: "类")
        monkeypatch.setattr(definitions, "_QUOTED_KIND", re.compile(r"(?!)"))
        monkeypatch.setattr(extractive, "gives_name", lambda text, words: bool(definitions._defined_words(text)))
    sources = [_evidence(FLASK_ZH, "alternatives.md", ["Alternatives"], 41)]
    assert ("微框架" in _answer("Flask 被称为什么类型的框架？", sources)) is rule


BODY_NOTE = """When you need to send data from a client to your API, you send it as a request body.
To send data, you should use one of: `POST` (the most common), `PUT`, `DELETE` or `PATCH`.
If you want to read more about the encodings, head to the MDN web docs for `POST`."""


@pytest.mark.parametrize("rule", [True, False], ids=["several_named", "control_one_name_is_enough"])
def test_asked_which_things_of_a_kind_the_line_naming_several_answers(monkeypatch, rule):
    """dev13 t1301 (Which HTTP methods should you use to send data in a request body?) was answered with a line
    pointing to MDN's docs for `POST`. An HTTP method is a name in capitals, and asked for methods (plural), the
    line listing several outranks one naming one."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(extractive, "asked_kind", lambda question: None)
    sources = [_evidence(BODY_NOTE, "body.md", ["Request Body"], 3)]
    answer = _answer("Which HTTP methods should you use to send data in a request body?", sources)
    assert ("`PATCH`" in answer) is rule


CLOUD = """You can deploy your FastAPI app to FastAPI Cloud with just one command.
```console
$ uv run fastapi deploy
Deploying to FastAPI Cloud...
```
The CLI will automatically detect your FastAPI application and deploy it to the cloud."""


@pytest.mark.parametrize("rule", [True, False], ids=["console_line_is_a_command", "control_no_rule"])
def test_asked_which_command_a_console_line_names_one(monkeypatch, rule):
    """dev13 t1304 (What command deploys a FastAPI app to FastAPI Cloud?) was answered with the lines around
    the console block, never with "$ uv run fastapi deploy": a console line names a command."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(extractive, "COMMAND_KINDS", frozenset())
        monkeypatch.setattr(
            extractive, "says_kind", lambda text, kind, question="": bool(re.search(rf"\b{kind}s?\b", text, re.I))
        )
    sources = [_evidence(CLOUD, "fastapicloud.md", ["FastAPI Cloud"], 3)]
    found = extractive_sentences("What command deploys a FastAPI app to FastAPI Cloud?", sources, weights=_weights)
    assert ("fastapi deploy" in " ".join(s.text for s in found[:2])) is rule


def test_a_chinese_question_ending_in_what_the_kind_is_asks_for_a_name():
    from kb_agent.agent.name_kinds import asked_kind

    assert asked_kind("发送请求体最常用的 HTTP 方法是什么？") == "方法"
    assert asked_kind("默认的中间件是什么？") == "中间件"
    assert asked_kind("这个参数是什么意思？") is None  # what it means, not which one


SCHEMES = """OpenAPI defines the following security schemes:

* `apiKey`: an application specific key that can come from:
    * A query parameter.
    * A header.
    * A cookie.
* `http`: standard HTTP authentication systems, including:
    * `bearer`: a header `Authorization` with a value of `Bearer ` plus a token.
"""
USES = """当你需要以下内容时，这非常有用：

* 共享业务逻辑（同一段代码逻辑反复复用）
* 共享数据库连接
* 实施安全、认证、角色权限等要求

同时尽量减少代码重复。
"""


def test_a_line_that_introduces_a_list_is_quoted_with_its_items(monkeypatch):
    """The line "`apiKey`: an application specific key that can come from:" alone answered where the key comes from with
    a colon (dev14 t1408). Quoted with its items, as a list, and cited to the lines of the list too."""
    from kb_agent.agent.citations import CheckedAnswer

    source = _evidence(SCHEMES, "en/docs/tutorial/security/index.md", ["Security", "OpenAPI"], start=71)
    question = "Where can the key of an apiKey security scheme come from?"

    def checked(q: str, e: Evidence) -> CheckedAnswer:
        answer = CheckedAnswer([e], q)
        for sentence in extractive_sentences(q, [e], max_sentences=1, weights=_weights):
            answer.add(sentence)
        return answer

    answer = checked(question, source)
    assert "- A cookie" in answer.body and "- A query parameter" in answer.body
    assert "`bearer`" not in answer.body  # the next item's own list is not this one's
    assert (answer.citations[0]["start_line"], answer.citations[0]["end_line"]) == (73, 76)
    uses = _evidence(USES, "zh/docs/tutorial/dependencies/index.md", ["依赖项"], 13)
    zh = checked("依赖项在什么情况下非常有用？", uses)
    assert "- 共享数据库连接" in zh.body and zh.citations[0]["end_line"] == 17

    # a list of lists is quoted with its items' few sub-items under them (stop 64; in stop 47, quoting such a list by
    # its items with the sub-items left out lost more answers than it gained: dev30 c3002 against t2406, fq22, t1306)
    nested = _evidence("Some tools you could use are:\n\n* Traefik\n    * renews certificates\n* Caddy\n", "t.md", [])
    intro = evidence_units.units_of(0, nested)[0]
    assert intro.text == "Some tools you could use are:"
    assert evidence_following.list_after(intro, nested) == ["Traefik\n  - renews certificates", "Caddy"]

    monkeypatch.setattr("kb_agent.agent.quote_selection.list_after", lambda unit, evidence: [])  # control
    assert "cookie" not in checked(question, source).body


def test_of_the_same_sentence_twice_the_one_saying_more_of_the_question_is_quoted():
    """The forms page and the forms-and-files page write the same warning, one about `Form` parameters, one
    about `File` and `Form`. Asked about both (dev14 c1402), the forms page's copy ranked first (the source
    order, "file" being a common word) and the other was dropped as its duplicate."""
    forms = _evidence(
        "You can declare multiple `Form` parameters in a *path operation*, but you can't also declare `Body` "
        "fields that you expect to receive as JSON, as the request will have the body encoded using "
        "`application/x-www-form-urlencoded` instead of `application/json`.",
        "en/docs/tutorial/request-forms.md", ["Form Data"], start=65,
    )  # fmt: skip
    files = _evidence(
        "You can declare multiple `File` and `Form` parameters in a *path operation*, but you can't also declare "
        "`Body` fields that you expect to receive as JSON, as the request will have the body encoded using "
        "`multipart/form-data` instead of `application/json`.",
        "en/docs/tutorial/request-forms-and-files.md", ["Request Forms and Files"], start=33,
    )  # fmt: skip
    question = "Why can't I declare Body fields that expect JSON together with File and Form parameters?"

    def common_file(asked: set[str]) -> dict[str, float]:
        return {t: 0.05 if t == "file" else 2.0 for t in asked}

    answer = extractive_sentences(question, [forms, files], max_sentences=1, weights=common_file)
    assert len(answer) == 1 and "multipart/form-data" in answer[0].text and answer[0].cited == [2]


PIN = """If you use a `requirements.txt` file you could specify the version with:

```txt
fastapi[standard]==0.112.0
```

that would mean that you would use exactly the version `0.112.0`.
"""


def test_a_sentence_broken_by_its_example_is_quoted_with_a_gap_and_cited_across_it():
    """The line "… specify the version with:", its example and "that would mean … `0.112.0`" are one sentence.
    Quoted as one without a mark, it read "with: that would mean" and was cited to its first half's lines
    only: a reader opening the citation did not see "exactly the version"."""
    from kb_agent.agent.citations import CheckedAnswer

    source = _evidence(PIN, "en/docs/deployment/versions.md", ["About FastAPI versions", "Pin"], start=17)
    question = "How do I pin the exact FastAPI version in requirements.txt?"
    answer = CheckedAnswer([source], question)
    for sentence in extractive_sentences(question, [source], max_sentences=1, weights=_weights):
        answer.add(sentence)
    assert "with: … that would mean" in answer.body
    assert (answer.citations[0]["start_line"], answer.citations[0]["end_line"]) == (17, 23)


VERSIONS_PAGE = """## Pin your `fastapi` version { #pin-your-fastapi-version }

For example, let's say you are using version `0.112.0` in your app.

If you use a `requirements.txt` file you could specify the version with `fastapi[standard]==0.112.0`.
"""


@pytest.mark.parametrize("rule", [True, False], ids=["owner_named", "control_any_version"])
def test_asked_the_version_of_a_name_a_version_of_something_else_is_no_answer(monkeypatch, rule):
    """dev14 u1404 (Which minimum version of uv does FastAPI require?) quoted the lines pinning FastAPI's
    `0.112.0`: a version, of FastAPI. Asked FastAPI's version, the same lines answer."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(extractive, "version_owner", lambda text: None)
    source = _evidence(VERSIONS_PAGE, "en/docs/deployment/versions.md", ["About FastAPI versions"], 11)
    assert bool(_answer("Which minimum version of uv does FastAPI require?", [source])) is not rule
    assert "0.112.0" in _answer("Which version of FastAPI does the example pin?", [source])


DOTENV = "\n\n".join(
    [
        "Pydantic has support for reading from these types of files using an external library. You can read more "
        "at [Pydantic Settings: Dotenv (.env) support](https://pydantic.dev/concepts/pydantic_settings/#dotenv).",
        "For this to work, add `python-dotenv` to your project with `uv add python-dotenv`.",
        "Here we define the config `env_file` inside of your Pydantic `Settings` class, and set the value to the "
        "filename with the dotenv file we want to use.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["package_shape", "control_any_name"])
def test_asked_which_package_the_line_that_installs_a_package_name_answers(monkeypatch, rule):
    """A package is what an installer takes ("add `python-dotenv`"); a link's address (`pydantic_settings` in
    a URL) names nothing the line says, and `env_file` is no package the line installs."""
    from kb_agent.agent import extractive, name_kinds

    if not rule:
        monkeypatch.setattr(name_kinds, "_SHAPES", {k: v for k, v in name_kinds._SHAPES.items() if k != "package"})
        monkeypatch.setattr(name_kinds, "_SAYS_PACKAGE", re.compile(r"(?!)"))
        monkeypatch.setattr(extractive, "POINTED_TO", 0.0)  # "For this to work" also reads the line before it
    question = "Which package do I add so Pydantic Settings can read a .env file?"
    sources = [_evidence(DOTENV, "settings.md", ["Settings", "Reading a `.env` file"])]
    top = extractive.rank(question, sources)[0]
    assert top.text.startswith("For this to work") is rule


def test_a_link_address_names_nothing_for_the_kind_asked():
    from kb_agent.agent import extractive

    question = "Which package do I add so Pydantic Settings can read a .env file?"
    sources = [_evidence(DOTENV, "settings.md", ["Settings", "Reading a `.env` file"])]
    pointer = next(u for u in extractive.rank(question, sources) if u.text.startswith("You can read more"))
    plain = next(u for u in extractive.rank(question, sources) if u.text.startswith("Pydantic has support"))
    assert pointer.score - plain.score < extractive.NAME_BONUS  # no name bonus for `pydantic_settings` in the URL


def test_clause_glue_is_no_key_term():
    assert {"so", "from"}.isdisjoint(question_terms.key_terms("Which package do I add so Pydantic can read from .env?"))


REQUEST_DIRECTLY = """FastAPI is validating the data of the request, converting it and generating documentation.

It would also mean that if you get data from the `Request` object directly it won't be validated by FastAPI.
"""


@pytest.mark.parametrize("rule", [True, False], ids=["one_line", "control_lesser_lines_too"])
def test_a_yes_no_question_is_answered_by_the_line_that_says_all_it_asks(monkeypatch, rule):
    """ "FastAPI is validating that data" beside the line that answers "no" misleads: a line saying much less
    of a yes/no question than the best one is left out."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(extractive, "_YES_NO", re.compile(r"(?!)"))
    question = "Is data I read directly from the Request object validated by FastAPI?"
    sources = [_evidence(REQUEST_DIRECTLY, "request.md", ["Details"])]
    answer = " ".join(s.text for s in extractive_sentences(question, sources, weights=_weights))
    assert "won't be validated" in answer
    assert ("is validating the data" in answer) is not rule


def test_how_many_is_the_question_frame_and_the_one_that_is_no_number():

    assert {"mani", "many", "much"}.isdisjoint(question_terms.key_terms("How many heroes can the database store?"))
    number = answer_types.ANSWER_TYPES[1][1]
    assert not number.search("Now we create a `HeroCreate` model, this is the one that will validate the data.")
    assert number.search("Use one worker per core.") and number.search("It runs 4 workers.")


GENERICS = "\n\n".join(
    [
        'Some types can take "type parameters" in square brackets, for example `list[str]`.',
        "These types that can take type parameters are called **Generic types** or **Generics**.",
        'Those internal types in the square brackets are called "type parameters".',
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["new_name", "control_definition_bonus"])
def test_asked_what_things_are_called_the_line_giving_a_name_the_question_does_not_say_answers(monkeypatch, rule):
    """ "… are called "type parameters"" calls them what the question already says; the answer is the line that
    gives the new name ("Generic types")."""
    from kb_agent.agent import definitions, extractive

    if not rule:
        monkeypatch.setattr(definitions, "ASKS_NAME", re.compile(r"(?!)"))
    question = "What are types that take type parameters in square brackets called?"
    top = extractive.rank(question, [_evidence(GENERICS, "python-types.md", ["Generic types"])])[0]
    assert ("Generic types" in top.text) is rule


HEROES = "\n\n".join(
    [
        "In the example, when the clients create a new hero, they send the `secret_name` field of the hero model, "
        "but it won't be returned in the API to the clients.",
        "Next, we create a `HeroPublic` model, this is the one that will be returned to the clients of the API.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["model_kind", "control_no_model_kind"])
def test_asked_which_model_the_line_naming_a_model_class_answers(monkeypatch, rule):
    from kb_agent.agent import name_kinds

    if not rule:
        monkeypatch.setattr(name_kinds, "_ASKS_FOR_A_NAME", re.compile(r"(?!)"))
    question = "Which model is returned to the clients of the API in the heroes example?"
    assert _answer(question, [_evidence(HEROES, "sql.md", ["Heroes"])]).startswith("Next, we create") is rule


UNICORN = "\n\n".join(
    [
        "Let's say you have a custom exception `UnicornException` that you might `raise` in a handler.",
        "Here, if you request `/unicorns/yolo`, the handler for `UnicornException` will return its response.",
        "So, you will receive a clean error, with an HTTP status code of `418` and a JSON content.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["number_asked", "control_no_answer_type"])
def test_asked_for_a_status_code_a_line_must_state_a_number(monkeypatch, rule):
    """dev18 z1803 "UnicornException 的处理器返回什么状态码？" was answered by the lines that restate the question
    (they name `UnicornException`, the `418` line does not); a status code is a number the line must state. Its
    constant's name is not asked for as a number."""
    from kb_agent.agent import extractive

    assert answer_types.asked_types("What status code does the UnicornException handler return?") == [4]
    assert answer_types.asked_types("UnicornException 的处理器返回什么状态码？") == [4]
    assert answer_types.asked_types("Which status code constant stands for 418?") == []
    if not rule:
        monkeypatch.setattr(answer_types, "asked_types", lambda question: [])
    question = "What status code does the UnicornException handler return?"
    top = extractive.rank(question, [_evidence(UNICORN, "errors.md", ["Handling Errors"])], weights=_weights)[0]
    assert ("418" in top.text) is rule


RERAISE = "\n\n".join(
    [
        "You can re-raise the same exception using `raise`:",
        "Now the client will get the same *HTTP 500 Internal Server Error* response, but the server will have our "
        "custom `InternalError` in the logs.",
        "In most cases you will want to re-raise that same exception or a new one from the dependency with `yield` "
        "to make sure it's properly handled.",
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["three_digits", "control_any_number"])
def test_asked_for_a_status_code_a_pronoun_one_is_no_code(monkeypatch, rule):
    """dev31 t3105 "Which status code does the client get when a dependency with yield catches an exception and
    re-raises it?" was answered by "… re-raise that same exception or a new one …": "one" passed as the number.
    A status code is three digits."""
    from kb_agent.agent import extractive

    if not rule:  # the status code read as any number, as before
        kinds = [*answer_types.ANSWER_TYPES[:4], (answer_types.ANSWER_TYPES[4][0], answer_types._NUMBER)]
        monkeypatch.setattr(answer_types, "ANSWER_TYPES", kinds)
    question = (
        "Which status code does the client get when a dependency with yield catches an exception and re-raises it?"
    )
    found = extractive.rank(question, [_evidence(RERAISE, "deps.md", ["Dependencies with yield"])], weights=_weights)
    assert all("500" in u.text for u in found) is rule


DOCKER_BUILD = "\n\n".join(
    [
        "Set the **command** to use `fastapi run`, which uses Uvicorn underneath.",
        "Now that all the files are in place, let's build the container image.",
        "* Build your FastAPI image:",
        '<div class="termy">\n\n```console\n$ docker build -t myimage .\n\n---> 100%\n```\n\n</div>',
    ]
)


@pytest.mark.parametrize("rule", [True, False], ids=["console_line_is_a_command", "control_the_word_alone"])
def test_asked_which_command_a_console_line_says_it_is_one(monkeypatch, rule):
    """ "Which command builds the container image?": `$ docker build …` is a command without the word; the line
    that writes "command" about `fastapi run` says nothing of building."""
    from kb_agent.agent import extractive

    if not rule:
        monkeypatch.setattr(
            extractive, "says_kind", lambda text, kind, question="": bool(re.search(rf"\b{kind}s?\b", text, re.I))
        )
    question = "Which command builds the container image in the Docker guide?"
    sources = [_evidence(DOCKER_BUILD, "en/docs/deployment/docker.md", ["FastAPI in Containers - Docker"])]
    top = extractive.rank(question, sources)[0]
    assert ("docker build" in top.text) is rule


ASSETS = """The API docs use **Swagger UI** and **ReDoc**, and each of those need some JavaScript and CSS files.

### Download the files { #download-the-files }

**Swagger UI** uses the files:

* [`swagger-ui-bundle.js`](https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js)
* [`swagger-ui.css`](https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css)

And **ReDoc** uses the file:

* [`redoc.standalone.js`](https://cdn.jsdelivr.net/npm/redoc@2/bundles/redoc.standalone.js)
"""


def test_asked_which_files_a_list_naming_files_is_quoted_with_the_line_introducing_it(monkeypatch):
    """dev20 t2005: "Which files does Swagger UI need …?" was answered by the line saying it needs "some
    JavaScript and CSS files", never naming one. The items name files (the kind asked for); each is read under
    the line introducing its list, and quoted as that list."""
    from kb_agent.agent import name_kinds

    question = "Which files does Swagger UI need when I self-host the docs assets?"
    source = _evidence(ASSETS, "custom-docs-ui-assets.md", ["Custom Docs UI Static Assets"])
    items = [u for u in evidence_units.units_of(0, source) if "swagger-ui.css" in u.text]
    assert items[0].intro is not None and items[0].intro.text == "**Swagger UI** uses the files:"
    answer = _answer(question, [source])
    assert "**Swagger UI** uses the files:\n- [`swagger-ui-bundle.js`]" in answer and "swagger-ui.css" in answer
    # control: an item alone is quoted, without what it is one of
    monkeypatch.setattr(quote_selection, "_as_lists", lambda chosen, sources: chosen)
    monkeypatch.setattr(extractive, "list_after", lambda unit, evidence: [])  # nor the line credited with its items
    assert "uses the files:" not in _answer(question, [source])
    # control: "file" no kind asked for - the line saying "files" without naming one comes first
    monkeypatch.setattr(name_kinds, "_ASKS_FOR_A_NAME", re.compile(r"(?!)"))
    assert _answer(question, [source]).startswith("The API docs use")


CUSTOM_ID = """FastAPI uses a **unique ID** for each *path operation*.

You can customize that function. It takes an `APIRoute` and outputs a string.

You can then pass that custom function to **FastAPI** as the `generate_unique_id_function` parameter:

{* ../../docs_src/generate_clients/tutorial003_py310.py hl[6:7,10] *}
"""


@pytest.mark.parametrize("example", [True, False], ids=["example_below", "control_prose_below"])
def test_a_line_announcing_an_example_is_no_confident_quote(example):
    """dev20 t2003 with the model: "What does a custom generate_unique_id_function take as its argument?" was
    answered at 0 calls by quoting "… pass that custom function … as the `generate_unique_id_function`
    parameter:", the line announcing the example; the model never saw the question. A line that announces an
    example leaves the answer out of the quote, so the model answers (here without the line that answers, so
    that the announcing line ranks first, as it did there)."""
    from kb_agent.agent.extractive import confident_quotes

    text = CUSTOM_ID if example else CUSTOM_ID.replace("{* ../../docs_src", "Then it is used for every ID. {*")
    source = _evidence(text, "generate-clients.md", ["Custom Generate Unique ID Function"])
    question = "What does a custom generate_unique_id_function take as its argument?"
    text = text.replace("You can customize that function. It takes an `APIRoute` and outputs a string.", "")
    source = _evidence(text, "generate-clients.md", ["Custom Generate Unique ID Function"])
    assert (confident_quotes(question, [source], weights=_weights) == []) is example


def test_a_line_announcing_an_example_that_names_the_answer_stays_a_quote():
    """tune fq08: "… add a custom header `X-Process-Time` containing the time …:" announces an example and names
    the header asked for: the quote holds the answer, no model call is needed."""
    from kb_agent.agent.extractive import confident_quotes

    text = (
        "For example, you could add a custom header `X-Process-Time` containing the time in seconds that it "
        "took to process the request and generate a response:\n\n{* ../../docs_src/middleware/tutorial001.py *}\n"
    )
    source = _evidence(text, "middleware.md", ["Middleware", "Create a middleware"])
    quotes = confident_quotes("What custom header does the middleware example add to responses?", [source])
    assert quotes and "X-Process-Time" in quotes[0].text


EDITORS = """The whole framework was designed to be easy and intuitive to use, all the decisions were tested on \
multiple editors even before starting development, to ensure the best development experience.

## Design { #design }

I tested several ideas in the most popular Python editors: PyCharm, VS Code, Jedi based editors.
"""


@pytest.mark.parametrize("rule", [True, False], ids=["instances_first", "control_no_instances"])
def test_asked_which_things_of_a_kind_the_line_listing_some_answers(monkeypatch, rule):
    """dev21 t2114: "In which editors …?" was answered by "… tested on multiple editors …", which names none;
    the line listing "editors: PyCharm, VS Code, Jedi …" answers."""
    from kb_agent.agent import name_kinds

    if not rule:
        monkeypatch.setattr(name_kinds, "INSTANCES", 99)
    source = _evidence(EDITORS, "history-design-future.md", ["History, Design and Future"])
    answer = _answer("In which editors was the design of FastAPI's developer API tested?", [source])
    assert ("PyCharm" in answer) is rule


HEY_API = """对于 **TypeScript 客户端**，[Hey API](https://heyapi.dev/) 是为 TypeScript 生态打造的专用方案。

当我们有了带模型的 FastAPI 应用后，可以使用 Hey API 来生成 TypeScript 客户端。最快的方式是通过 npx。

这会在 `./src/client` 生成一个 TypeScript SDK。
"""


@pytest.mark.parametrize("rule", [True, False], ids=["path_named", "control_no_directory_kind"])
def test_asked_which_directory_the_line_naming_a_path_answers(monkeypatch, rule):
    """dev20 z2005: "…TypeScript SDK 放在哪个目录？" quoted the lines about Hey API and npx, which name no directory;
    the line naming `./src/client` answers."""
    from kb_agent.agent import name_kinds

    if not rule:
        monkeypatch.setitem(name_kinds._SHAPES, "目录", re.compile(r"(?!)"))
        monkeypatch.setattr("kb_agent.agent.extractive.POINTED_TO", 0.0)  # "这会在 …" also reads the line before
    source = _evidence(HEY_API, "generate-clients.md", ["生成客户端"])
    assert ("./src/client" in _answer("用 Hey API 生成的 TypeScript SDK 放在哪个目录？", [source])) is rule
