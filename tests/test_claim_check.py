"""The claim check keeps true sentences a small model writes in its own words, and still removes false ones.

Cases from the held-out FastAPI answers: a correct restatement of the question removed (a possessive broke the
default-value reader; a name introduced a few lines above its chunk), a correct value cited to a warning that
repeats it, a citation to the wrong one of two lines that hold the value, and "you" carrying a sentence."""

from __future__ import annotations

import re

import pytest

from kb_agent.agent import claim_guards, claims, evidence_lines
from kb_agent.agent.claim_terms import checkable, holds
from kb_agent.agent.claims import ClaimChecker
from kb_agent.agent.sentences import split_sentences
from kb_agent.tools.base import Evidence


def _evidence(text: str, path: str, start: int = 1) -> Evidence:
    lines = text.split("\n")
    return Evidence(source=path, path=path, start_line=start, end_line=start + len(lines) - 1, text=text)


def _check(sources: list[Evidence], question: str, answer: str):
    return ClaimChecker(sources, question).check(split_sentences(answer)[0])


CORS_PARAMS = _evidence(
    "The following arguments of the FastAPI middleware are supported:\n"
    "* `allow_credentials` - Indicate that cookies should be supported. Defaults to `False`.\n"
    "* `max_age` - Sets a maximum time in seconds for browsers to cache CORS responses. Defaults to `600`.",
    "cors.md",
    63,
)
CORS_INTRO = _evidence(
    "## Use `CORSMiddleware`\nYou can configure it in your **FastAPI** application using the `CORSMiddleware`.",
    "cors.md",
    35,
)
OTHERS = [
    _evidence("CORSMiddleware is one of many middlewares; GZipMiddleware compresses responses.", "middleware.md"),
    _evidence("Deploying with Docker starts from the official Python image.", "docker.md", 10),
    _evidence("Settings are read from environment variables.", "settings.md", 20),
]


def test_a_default_restated_with_a_possessive_is_read_as_its_value():
    question = "What is the default value of max_age in FastAPI's CORSMiddleware?"
    right = _check(
        [CORS_PARAMS, CORS_INTRO, *OTHERS], question, "The default value of max_age in FastAPI's CORSMiddleware is 600."
    )
    assert right.supported and right.citations == ["cors.md:L65-65"]
    wrong = _check(
        [CORS_PARAMS, CORS_INTRO, *OTHERS], question, "The default value of max_age in FastAPI's CORSMiddleware is 800."
    )
    assert not wrong.supported


def test_a_name_from_the_question_may_be_introduced_a_few_lines_above_on_the_same_page():
    question = "What does the max_age of the SessionGuard set?"
    intro = _evidence("## Use `SessionGuard`\nImport `SessionGuard` and add it to the app.", "guard.md", 50)
    params = _evidence(
        "* `max_age` - Sets how long a session lives, in seconds. Defaults to `1209600`.", "guard.md", 60
    )
    answer = "The `max_age` of the SessionGuard sets how long a session lives, `1209600` seconds by default."
    claim = _check([params, intro, *OTHERS], question, answer)
    assert claim.supported and claim.citations == ["guard.md:L60-60"]
    # control: the same name 900 lines away on the page introduces nothing for these lines
    far = _evidence("## Use `SessionGuard`\nImport `SessionGuard` and add it to the app.", "guard.md", 960)
    assert not _check([params, far, *OTHERS], question, answer).supported


def test_a_value_also_repeated_in_a_warning_is_cited_to_the_line_that_states_the_fact():
    question = "Which parameter of Header disables the conversion of underscores to hyphens?"
    warning = _evidence(
        "/// warning\n\nBefore setting `convert_underscores` to `False`, bear in mind that some proxies disallow it.",
        "header-param-models.md",
        64,
    )
    statement = _evidence(
        "If you need to disable automatic conversion of underscores to hyphens, set the parameter "
        "`convert_underscores` of `Header` to `False`:",
        "header-params.md",
        47,
    )
    answer = "The parameter of Header that disables the conversion of underscores to hyphens is `convert_underscores`."
    claim = _check([warning, statement], question, answer + " Set it to `False`.")
    assert claim.supported and claim.citations == ["header-params.md:L47-47"]


def test_of_two_lines_with_the_value_the_one_that_says_what_the_question_asked_is_cited():
    page = _evidence(
        "# Templates\n\nA common choice is Jinja2, the same one used by Flask.\n\n## Install\n\n"
        "Add `jinja2` to your project:",
        "templates.md",
    )
    claim = _check([page], "Which package do I add to my project to render templates?", "Add `jinja2` to the project.")
    assert claim.supported and claim.citations == ["templates.md:L7-7"]


def test_pronouns_do_not_carry_a_sentence_past_the_word_floor():
    question = "How can I run code after the response has been sent?"
    notes = _evidence(
        "This was reverted in 0.118.0: you can run the exit code after the response is sent.", "release-notes.md", 1672
    )
    assert not _check(
        [notes], question, "You can run code after the response has been sent by using middleware."
    ).supported


def test_a_sentence_of_background_names_is_cited_to_the_lines_that_echo_the_question():
    """`convert_underscores` is in most sources (so no checkable item of its own): the window is chosen by the
    sentence's words, then by the question's words it repeats - line 47, not the warning at line 53."""
    page = _evidence(
        "If you need to disable automatic conversion of underscores to hyphens, set the parameter "
        "`convert_underscores` of `Header` to `False`:\n\n{* tutorial002.py *}\n\n/// warning\n\n"
        "Before setting `convert_underscores`, bear in mind that some proxies disallow underscores.",
        "header-params.md",
        47,
    )
    models = _evidence("Use `convert_underscores` in header models too.", "header-param-models.md", 60)
    notes = _evidence("Add support for `convert_underscores` in models.", "release-notes.md", 500)
    question = "Which parameter of Header disables the conversion of underscores to hyphens?"
    answer = "The parameter of Header that disables the conversion of underscores to hyphens is `convert_underscores`."
    claim = _check([page, models, notes], question, answer)
    assert claim.supported and claim.citations == ["header-params.md:L47-47"]


TYPES = _evidence(
    "* `datetime.date`:\n"
    "    * Python `datetime.date`.\n"
    "    * In requests and responses will be represented as a `str` in ISO 8601 format, like: `2008-09-15`.\n"
    "* `datetime.time`:\n"
    "    * A Python `datetime.time`.\n"
    "    * In requests and responses will be represented as a `str` in ISO 8601 format, like: `14:23:55.003`.\n"
    "* `datetime.timedelta`:\n"
    "    * A Python `datetime.timedelta`.\n"
    "    * In requests and responses will be represented as a `float` of total seconds.",
    "extra-data-types.md",
    30,
)
COMMON = _evidence(
    "Until now you have used common types:\n\n* `int`\n* `float`\n* `str`\n* `bool`", "extra-data-types.md", 3
)


def test_a_value_under_another_list_item_is_not_about_the_subject(monkeypatch):
    """The blind check set's "timedelta … as a `float` in ISO 8601 format, like: 14:23:55.003": the example
    belongs to `datetime.time`, the item above; `str` in a plain list of common types is about no subject."""
    question = "How is a datetime.timedelta represented in requests and responses?"
    sources = [TYPES, COMMON, *OTHERS]
    wrong = "A `datetime.timedelta` is represented as a `str` in ISO 8601 format, like: 14:23:55.003."
    assert not _check(sources, question, wrong).supported
    assert not _check(sources, question, "A `datetime.timedelta` is represented as a `str` [1].").supported
    right = _check(sources, question, "A `datetime.timedelta` is represented as a `float` of total seconds [1].")
    assert right.supported and right.citations == ["extra-data-types.md:L36-38"]  # with the item naming it
    zh = _check(sources, "timedelta 在请求和响应中用什么类型表示？", "`datetime.timedelta` 用 `str` 表示。")
    assert not zh.supported
    # control: with every line taken as about the subject, both wrong sentences are kept
    monkeypatch.setattr(ClaimChecker, "_about", lambda self, index, subjects: [True] * len(self._lines[index].texts))
    assert _check(sources, question, wrong).supported
    assert _check(sources, question, "A `datetime.timedelta` is represented as a `str` [1].").supported


SSE = _evidence(
    "## Technical Details\n"
    "FastAPI implements some SSE best practices out of the box.\n"
    "* Send a keep alive `ping` comment every 15 seconds, to prevent some proxies from closing the connection.\n"
    "* Set the `Cache-Control: no-cache` header to **prevent caching** of the stream.\n"
    "* Set a special header `X-Accel-Buffering: no` to **prevent buffering** in some proxies like Nginx.\n"
    "You don't have to do anything about it.",
    "server-sent-events.md",
    112,
)


def test_a_list_item_beside_the_cited_one_that_says_what_the_question_asks(monkeypatch):
    """The blind check set's "`Cache-Control: no-cache` is set to prevent buffering … like Nginx": the cited item
    prevents caching; the next item is the one about buffering in proxies."""
    question = "Which header is set to prevent buffering of server-sent events in proxies like Nginx?"
    wrong = "The `Cache-Control: no-cache` header is set to prevent buffering in proxies like Nginx [1]."
    right = "The `X-Accel-Buffering: no` header is set to prevent buffering in proxies like Nginx [1]."
    assert not _check([SSE, *OTHERS], question, wrong).supported
    kept = _check([SSE, *OTHERS], question, right)
    assert kept.supported and kept.citations == ["server-sent-events.md:L116-116"]
    both = "`Cache-Control: no-cache` prevents caching and `X-Accel-Buffering: no` prevents buffering [1]."
    assert _check([SSE, *OTHERS], question, both).supported  # both items cited: neither says more than its own
    monkeypatch.setattr(claim_guards, "sibling_says_more", lambda lines, cited, words: False)  # control
    assert _check([SSE, *OTHERS], question, wrong).supported


def test_short_code_is_a_whole_word_and_a_list_number_is_no_claim():
    assert not holds("use strict mode", "str") and holds("as a str in iso", "str")
    assert not holds("tutorial003_an_py310.py hl[10]", "1") and holds("equal to 1.", "1")
    assert holds("用str表示", "str")  # Chinese may touch it
    assert holds("2008-09-15t15:53:00", "15") and holds("as operationids, you", "operationid")
    # a quoted sentence is cited to the line it ends on, not to a longer line it is the start of
    said = "In requests and responses it is a `str` in ISO 8601 format, like: `2008-09-15"
    lines = _evidence(f"{said}T15:53:00+05:00`.\n* `datetime.date`:\n{said}`.", "types.md", 29)
    quoted = _check([lines, *OTHERS], "How is a date shown?", f"{said}`.")
    assert quoted.citations == ["types.md:L31-31"]
    [item] = split_sentences("1. Set the `Cache-Control: no-cache` header [1].")
    assert item.cited == [1] and "1" not in checkable(item.text)
    assert _check(
        [SSE, *OTHERS], "What does Cache-Control do?", "1. `Cache-Control: no-cache` prevents caching [1]."
    ).supported


GZIP = _evidence(
    "The following arguments are supported:\n"
    "* `minimum_size` - Do not GZip responses that are smaller than this minimum size in bytes. Defaults to `500`.\n"
    "* `compresslevel` - Used during GZip compression. It is an integer ranging from 1 to 9. Defaults to `9`.",
    "middleware.md",
    80,
)


def test_a_value_from_the_item_above_is_not_stitched_into_a_sentence(monkeypatch):
    """From `benchmarks/claim_swaps.py`: the sentence of one list item with the value of the item above it. One
    window may not join two sibling items, and a value only an extra span holds must have the sentence's words
    around it there too."""
    question = "What is the default compression level of GZipMiddleware?"
    right = "`compresslevel` is used during GZip compression, an integer ranging from 1 to 9 [1]."
    kept = _check([GZIP, *OTHERS], question, right)
    assert kept.supported and kept.citations == ["middleware.md:L82-82"]
    wrong = "`compresslevel` is used during GZip compression, an integer ranging from 500 to 9 [1]."
    assert not _check([GZIP, *OTHERS], question, wrong).supported
    ping = "Send a keep alive `Cache-Control: no-cache` comment every 15 seconds [1]."
    assert not _check([SSE, *OTHERS], "What keeps a server-sent event stream alive?", ping).supported
    both = "`minimum_size` defaults to `500` bytes and `compresslevel` defaults to `9` [1]."
    assert _check([GZIP, *OTHERS], question, both).supported  # two items, two spans, each in its own words
    # controls: the guards off, both wrong sentences are kept
    monkeypatch.setattr(evidence_lines, "crosses_items", lambda lines, first, last: False)
    monkeypatch.setattr(ClaimChecker, "_in_context", lambda self, sentence, values, span: True)
    assert _check([GZIP, *OTHERS], question, wrong).supported
    assert _check([SSE, *OTHERS], "What keeps a server-sent event stream alive?", ping).supported


def test_code_the_sentence_repeats_from_the_question_is_on_the_cited_lines_too():
    """fq28 (flagged by the on-disk re-check): "the `directory` parameter names the folder …, and `name` gives it
    an internal name" was cited to the `name` line alone; now the `directory` line is cited."""
    page = _evidence(
        'The first `"/static"` is the sub-path it is mounted on.\n\n'
        'The `directory="static"` refers to the name of the directory that contains your static files.\n\n'
        'The `name="static"` gives it a name that can be used internally by **FastAPI**.',
        "static-files.md",
        38,
    )
    answer = (
        "The `directory` parameter is the name of the directory that contains your static files, "
        "and the `name` parameter gives it a name that can be used internally by FastAPI [1]."
    )
    claim = _check([page, *OTHERS], "How do I serve static files from a directory?", answer)
    # the `directory` line is cited (`name` also matches the word "name" on it: code is compared as words)
    assert claim.supported and claim.citations[0].startswith("static-files.md:L40-")


SSE_ZH = _evidence(
    "## 技术细节\n"
    "FastAPI 开箱即用地实现了一些 SSE 的最佳实践。\n"
    "- 当 15 秒内没有任何消息时，发送一个**保活 `ping` 注释**，以防某些代理关闭连接。\n"
    "- 设置 `Cache-Control: no-cache` 响应头，**防止缓存**流。",
    "sse.md",
    112,
)


def test_a_number_read_in_another_unit_than_the_cited_line_states_is_removed(monkeypatch):
    """The blind set's unanswerable "FastAPI 自带的消息队列默认保留消息多少天？" was answered "… 保留消息 15 天"
    citing "当 15 秒内没有任何消息时": the number and 消息 were on the line, the unit was not."""
    question = "FastAPI 自带的消息队列默认保留消息多少天？"
    assert not _check([SSE_ZH], question, "FastAPI 自带的消息队列默认保留消息 15 天。").supported
    kept = _check([SSE_ZH], "SSE 流在没有消息时每隔多少秒发送一次 ping？", "没有消息时每隔 15 秒发送一次 `ping` 注释。")
    assert kept.supported  # the same number in its own unit
    plain = _check([CORS_PARAMS], "What is the default max_age?", "The default `max_age` is 600 seconds.")
    assert plain.supported  # the line says 600 without a unit next to it: not judged
    monkeypatch.setattr(ClaimChecker, "_changes_a_unit", lambda self, sentence, spans: False)  # control
    assert _check([SSE_ZH], question, "FastAPI 自带的消息队列默认保留消息 15 天。").supported


def test_a_name_written_as_code_that_the_question_did_not_ask_is_checked_on_the_cited_lines(monkeypatch):
    """ "first install `httpx`" was cited to a line without httpx: most sources mention httpx, so it was taken
    for a framing name like "FastAPI" and not looked for (the on-disk re-check of the model answers found it)."""
    testing = _evidence(
        "# Testing\nIt is based on HTTPX, so it is familiar.\nTo use `TestClient`, first install `httpx`.\n"
        "Import `TestClient`.\nYou could also use `from starlette.testclient import TestClient`, directly from "
        "Starlette.",
        "testing.md",
    )
    others = [
        _evidence("Use `httpx` with `AsyncClient` in async tests.", "async.md"),
        _evidence("The `httpx` client sends requests to the app.", "client.md", 5),
    ]
    question = "What must be installed to use TestClient?"
    answer = "To use TestClient, first install `httpx`, directly from Starlette."
    claim = _check([testing, *others], question, answer)
    assert claim.supported and claim.citations == ["testing.md:L3-3"]
    framing = claims.ClaimChecker._background
    monkeypatch.setattr(claims.ClaimChecker, "_background", lambda self, item, as_code=(): framing(self, item))
    monkeypatch.setattr(claims.ClaimChecker, "_showing", lambda self, values, spans: spans)  # this guard alone
    assert _check([testing, *others], question, answer).citations == ["testing.md:L5-5"]  # control


def test_a_value_cited_under_its_list_item_shows_the_item_that_names_what_it_is_about(monkeypatch):
    """The on-disk re-check found "A datetime.timedelta is represented as a float …" cited to the `float` line
    alone: the claim check read the subject from the list item above, the reader of "L38-38" could not."""
    types = _evidence(
        "* `datetime.time`:\n    * A Python `datetime.time`.\n"
        "    * In requests and responses will be represented as a `str` in ISO 8601 format.\n"
        "* `datetime.timedelta`:\n    * A Python `datetime.timedelta`.\n"
        "    * In requests and responses will be represented as a `float` of total seconds.",
        "types.md",
        33,
    )
    question = "How is a datetime.timedelta represented in requests and responses?"
    answer = "A datetime.timedelta is represented as a `float` of total seconds in requests and responses."
    claim = _check([types, *OTHERS], question, answer)
    assert claim.supported and claim.citations == ["types.md:L36-38"]
    monkeypatch.setattr(claims.ClaimChecker, "_with_frame", lambda self, subjects, span: [span])  # control
    monkeypatch.setattr(claims.ClaimChecker, "_showing", lambda self, values, spans: spans)  # this guard alone
    assert _check([types, *OTHERS], question, answer).citations == ["types.md:L38-38"]


def test_a_subject_only_a_far_heading_names_is_cited_with_that_heading(tmp_path, monkeypatch):
    """The blind set's "要从 `fastapi.templating` 模块导入 `Jinja2Templates` 类" was cited to line 50 alone, which
    names only the module; the section heading 27 lines up names the class. Both lines are cited now, and the
    on-disk re-check finds every code name of the sentence in them."""
    from kb_agent.evaluation.answers import CitedLines, unsupported_kept

    page = "\n".join(
        [
            "## 使用 `Jinja2Templates` { #using-jinja2templates }",
            *(f"第 {i} 行说明模板的其他用法。" for i in range(24)),
            "你还可以使用 `from starlette.templating import Jinja2Templates`。",
            "",
            "**FastAPI** 将同一个 `starlette.templating` 作为 `fastapi.templating` 提供，只是为了方便开发者使用。",
        ]
    )
    (tmp_path / "templates.md").write_text(page + "\n", encoding="utf-8")
    others = [  # every source names the class: it frames the sentence, the module is its claim
        _evidence("Read more about `Jinja2Templates` in the docs for templates.", "reference.md"),
        _evidence("Create a `Jinja2Templates` object to render HTML.", "templates-en.md", 30),
    ]
    sources = [_evidence(page, "templates.md", 23), *others]
    question = "Jinja2Templates 类要从哪个模块导入？"
    answer = "要从 `fastapi.templating` 模块导入 `Jinja2Templates` 类[1]。"
    cited = CitedLines(tmp_path)

    def shifted(claim):  # the test page starts at line 23 of its (imagined) file; on disk it starts at 1
        claim.citation = "; ".join(
            f"templates.md:L{int(a) - 22}-{int(b) - 22}"
            for a, b in (c.rsplit(":L", 1)[1].split("-") for c in claim.citations)
        )
        return claim

    claim = _check(sources, question, answer)
    assert claim.supported and claim.citations == ["templates.md:L23-23", "templates.md:L50-50"]
    assert unsupported_kept([shifted(claim)], cited) == []
    monkeypatch.setattr(claims.ClaimChecker, "_with_frame", lambda self, subjects, span: [span])  # control
    monkeypatch.setattr(claims.ClaimChecker, "_showing", lambda self, values, spans: spans)  # this guard alone
    claim = _check(sources, question, answer)
    assert claim.citations == ["templates.md:L50-50"] and unsupported_kept([shifted(claim)], cited) != []


def test_a_code_name_with_capitals_is_not_stated_by_the_plain_word(monkeypatch):
    """The demo's model answer "you can use the `Body` parameter decorator" was kept, cited to "Read the body of
    the request as JSON": case-folded, `Body` was the word "body"."""
    results = _evidence(
        "## Results\nWith just that Python type declaration, **FastAPI** will:\n\n"
        "* Read the body of the request as JSON.\n* Pass the data to the *path operation decorator*'s function.",
        "body.md",
        66,
    )
    question = "How do I declare a request body?"
    wrong = "To declare a request body, you can use the `Body` parameter decorator [1]."
    assert not _check([results, *OTHERS], question, wrong).supported
    named = _evidence("Use `Body` to declare a singular value in the body.", "body-multiple-params.md", 90)
    assert _check([named, *OTHERS], question, "You can use `Body` to declare a value in the body [1].").supported
    monkeypatch.setattr(claims.ClaimChecker, "_code_case_held", lambda self, sentence, spans: True)  # control
    assert _check([results, *OTHERS], question, wrong).supported


def test_a_code_line_the_answer_writes_must_be_copied_from_a_source(monkeypatch):
    """The demo's model answer wrote a code block; "from fastapi import FastAPI, Body" was kept, cited to lines
    that only say "FastAPI" and "body" in prose. Fences are no claims; a code line must be a source's own."""
    from kb_agent.agent.citations import CheckedAnswer

    source = _evidence(
        "With just that Python type declaration, **FastAPI** will:\n* Read the body of the request as JSON.\n"
        "```Python\napp.add_middleware(CORSMiddleware, allow_origins=origins)\n```",
        "body.md",
        68,
    )
    answer = (
        "FastAPI will read the body of the request as JSON [1].\n```python\nfrom fastapi import FastAPI, Body [1]\n"
        "app.add_middleware(CORSMiddleware, allow_origins=origins) [1]\n```"
    )
    checked = CheckedAnswer([source, *OTHERS], "How do I declare a request body?")
    shown = checked.add_text(answer)
    assert "read the body of the request" in shown and "```" not in shown
    assert "import FastAPI, Body" not in shown and "app.add_middleware(CORSMiddleware" in shown  # copied: kept
    control = CheckedAnswer([source, *OTHERS], "How do I declare a request body?")
    monkeypatch.setattr(CheckedAnswer, "add", _without_fence_rule)  # control: the fence rule off
    assert "import FastAPI, Body" in control.add_text(answer)


def _without_fence_rule(self, sentence, written=False):
    """CheckedAnswer.add as it was: every sentence, code or not, by the lexical check."""
    claim = self.checker.check(sentence)
    self.claims.append(claim)
    return sentence.text if claim.supported else ""


SERVERS = _evidence(
    "## ASGI Servers\n"
    "You need an ASGI server program like **Uvicorn**, the one that comes by default.\n\n"
    "There are several alternatives, including:\n\n"
    "* [Uvicorn](https://uvicorn.dev): a high performance ASGI server.\n"
    "* [Hypercorn](https://hypercorn.readthedocs.io/): an ASGI server compatible with HTTP/2 and Trio.\n"
    "* [Daphne](https://github.com/django/daphne): the ASGI server built for Django Channels.",
    "manually.md",
    45,
)


def test_the_name_a_sentence_opens_with_is_on_the_lines_it_cites(monkeypatch):
    """The 1.5B answered "Uvicorn is compatible with HTTP/2 [1]", cited to the Hypercorn item: a name at the
    start of a sentence was not read as one, and a name anywhere in the passage was enough."""
    question = "Which ASGI server is compatible with HTTP/2?"
    wrong, right = "Uvicorn is compatible with HTTP/2 [1].", "Hypercorn is compatible with HTTP/2 [1]."
    assert not _check([SERVERS, *OTHERS], question, wrong).supported
    assert _check([SERVERS, *OTHERS], question, right).citations == ["manually.md:L51-51"]
    # an ordinary opening word is no name, though capitalised: "Install" is not written so inside a sentence
    assert _check([SERVERS, *OTHERS], question, "Install Hypercorn for HTTP/2 [1].").supported
    monkeypatch.setattr(claims.ClaimChecker, "_lead_name", lambda self, sentence: set())  # control
    assert _check([SERVERS, *OTHERS], question, wrong).supported


STATIC = _evidence(
    '### What is "Mounting"\n\n"Mounting" means adding a complete "independent" application in a specific path.\n\n'
    "This is different from using an `APIRouter`: a mounted application is completely independent.\n\n"
    "You can read more about this in the Advanced User Guide.\n\n## Details\n\n"
    'The first `"/static"` refers to the sub-path this "sub-application" will be "mounted" on.\n\n'
    'The `directory="static"` refers to the name of the directory that contains your static files.\n\n'
    'The `name="static"` gives it a name that can be used internally by **FastAPI**.\n\n'
    'All these parameters can be different than "`static`", adjust them to your own application.',
    "static-files.md",
    28,
)
STATIC_INTRO = _evidence(
    "# Static Files\n\nYou can serve static files automatically from a directory using `StaticFiles`.",
    "static-files.md",
)
REFERENCE = _evidence(
    "# Static Files - `StaticFiles`\n\nUse the `StaticFiles` class to serve files.\n\n"
    "You can import it directly from `fastapi.staticfiles`:",
    "staticfiles.md",
)


@pytest.mark.parametrize("widen", [True, False], ids=["widened", "control_name_line_only"])
def test_a_citation_widens_to_the_nearby_line_that_shows_a_code_name_the_sentence_writes(tmp_path, monkeypatch, widen):
    """The model's "The `directory` parameter specifies the directory …, and the `name` parameter gives it a name
    …" was cited to the `name` line alone; the on-disk re-check found `directory` two lines above."""
    from kb_agent.evaluation.answers import CitedLines, unsupported_kept

    if not widen:
        monkeypatch.setattr(claims.ClaimChecker, "_showing", lambda self, values, spans: spans)
    (tmp_path / "static-files.md").write_text(STATIC_INTRO.text + "\n" * 25 + STATIC.text + "\n", encoding="utf-8")
    question = "How do I serve static files from a directory?"
    answer = (
        "The `directory` parameter specifies the name of the directory containing your static files, and the "
        "`name` parameter gives it a name that can be used internally by FastAPI."
    )
    claim = _check([STATIC_INTRO, REFERENCE, STATIC], question, answer + " [2]")
    assert claim.supported
    claim.citation = "; ".join(claim.citations)
    assert (unsupported_kept([claim], CitedLines(tmp_path)) == []) is widen
    assert (claim.citations == ["static-files.md:L40-42"]) is widen


OAUTH_FORM = _evidence(
    "The OAuth2 spec requires a field `grant_type` with a fixed value of `password`, but the form does not enforce "
    "it.\n\nIf you need to enforce it, use `PasswordFormStrict` instead of `PasswordForm`.\n\n"
    "The `PasswordForm` is not a special class.",
    "oauth.md",
    66,
)


@pytest.mark.parametrize("reach", [2, 0], ids=["pronoun_reach", "control_cited_lines_only"])
def test_a_sentence_answering_of_a_name_two_lines_up_is_on_the_question(monkeypatch, reach):
    """ "If you need to enforce it, use `PasswordFormStrict`" answers "which class enforces grant_type": the
    name is two lines up, where "it" points (dev8's e805 lost its answer to the off-question rule)."""
    from kb_agent.agent import citations
    from kb_agent.agent.citations import CheckedAnswer

    monkeypatch.setattr(citations, "ANCHOR_REACH", reach)
    question = "Which class enforces the grant_type field?"
    checked = CheckedAnswer([OAUTH_FORM], question, anchors=["grant_type"])
    (sentence,) = split_sentences("If you need to enforce it, use `PasswordFormStrict` instead of `PasswordForm` [1].")
    assert bool(checked.add(sentence)) is (reach == 2)
    assert checked.claims[0].off_question is (reach == 0)
    off = CheckedAnswer([OAUTH_FORM], question, anchors=["grant_type"])
    (other,) = split_sentences("The `PasswordForm` is not a special class [1].")  # four lines down: off the question
    assert off.add(other) == "" and off.claims[0].off_question


EXAMPLES_SECTION = _evidence(
    "### Using the `openapi_examples` Parameter\n\nYou can declare them with `openapi_examples` for:\n\n"
    + "\n".join(f"* `Param{i}()`" for i in range(8))
    + "\n\nThe keys of the `dict` identify each example, and each value is another `dict`.\n\n"
    "### Other section\n\nThe keys of the `dict` are free text.",
    "examples.md",
    91,
).model_copy(update={"heading_path": ["Declare Request Example Data", "Examples in the docs"]})


@pytest.mark.parametrize("headings", [True, False], ids=["section_heading", "control_lines_only"])
def test_a_sentence_under_a_heading_that_names_the_asked_code_is_on_the_question(monkeypatch, headings):
    """dev20 t2013: "Which keys can each example dict passed in openapi_examples contain?" was refused: the
    answering line is twelve lines below the heading that names `openapi_examples`, out of ANCHOR_REACH."""
    from kb_agent.agent import citations
    from kb_agent.agent.citations import CheckedAnswer

    if not headings:  # neither the heading path nor the section's lines read
        monkeypatch.setattr(citations, "section_of", lambda evidence, line: "")
        monkeypatch.setattr(citations, "section_lines", lambda evidence, line: "")
    question = "Which keys can each example dict passed in openapi_examples contain?"
    checked = CheckedAnswer([EXAMPLES_SECTION], question, anchors=["openapi_examples"])
    (sentence,) = split_sentences("The keys of the `dict` identify each example [1].")
    assert bool(checked.add(sentence)) is headings
    assert checked.claims[0].off_question is not headings
    # a heading that names something else does not put a line on the question
    other = CheckedAnswer([EXAMPLES_SECTION], question, anchors=["openapi_examples"])
    (free,) = split_sentences("The keys of the `dict` are free text [1].")
    assert other.add(free) == ""


@pytest.mark.parametrize("whole", [True, False], ids=["whole_number", "control_digit_in_an_address"])
def test_a_number_is_not_held_by_an_address_or_version_that_contains_its_digit(monkeypatch, whole):
    """The blind set's bl22 (a message queue FastAPI does not have) was answered "FastAPI 自带的消息队列默认保留消息
    1 天[1][2]。", kept on `fastapi dev`'s lines: the "1" was the last digit of 127.0.0.1."""
    from kb_agent.agent import claim_terms

    cli = _evidence(
        "## `fastapi dev` { #fastapi-dev }\n\n运行 `fastapi dev` 会启动开发模式。\n\n"
        "默认情况下，它会启用**自动重载**。它还会监听 IP 地址 `127.0.0.1`，这是你的机器仅与自身通信的 IP。\n\n"
        "如果 `FASTAPI_ENV` 已经设置，则会保留其现有值，消息也会保留。",
        "fastapi-cli.md",
        116,
    )
    if not whole:
        monkeypatch.setattr(
            claim_terms, "_pattern", lambda item: re.compile(r"(?<![0-9])" + re.escape(item) + r"(?![0-9])")
        )
    claim = _check([cli, *OTHERS], "FastAPI 自带的消息队列默认保留消息多少天？", "FastAPI 默认保留消息 1 天[1]。")
    assert claim.supported is not whole
    assert claim_terms.holds("use 1 worker", "1") and claim_terms.holds("Defaults to 600.", "600")


# the FastAPI docs (MIT), index.md L421-471: what the framework does for the example
FEATURES = _evidence(
    (
        "* Automatic interactive API documentation, including 2 alternative user interfaces:\n"
        "    * Swagger UI.\n"
        "    * ReDoc.\n"
        "\n"
        "---\n"
        "\n"
        "Coming back to the previous code example, **FastAPI** will:\n"
        "\n"
        "* Validate that there is an `item_id` in the path for `GET` and `PUT` requests.\n"
        "* Validate that the `item_id` is of type `int` for `GET` and `PUT` requests.\n"
        "    * If it is not, the client will see a useful, clear error.\n"
        "* Check if there is an optional query parameter named `q` (as in `http://127.0.0.1:8000/items/foo?q=somequery`) for `GET` requests.\n"  # noqa: E501 - the line as the docs write it
        "    * As the `q` parameter is declared with `= None`, it is optional.\n"
        "    * Without the `None` it would be required (as is the body in the case with `PUT`).\n"
        "* For `PUT` requests to `/items/{item_id}`, read the body as JSON:\n"
        "    * Check that it has a required attribute `name` that should be a `str`.\n"
        "    * Check that it has a required attribute `price` that has to be a `float`.\n"
        "    * Check that it has an optional attribute `is_offer`, that should be a `bool`, if present.\n"
        "    * All this would also work for deeply nested JSON objects.\n"
        "* Convert from and to JSON automatically.\n"
        "* Document everything with OpenAPI, that can be used by:\n"
        "    * Interactive documentation systems.\n"
        "    * Automatic client code generation systems, for many languages.\n"
        "* Provide 2 interactive documentation web interfaces directly.\n"
        "\n"
        "---\n"
        "\n"
        "We just scratched the surface, but you already get the idea of how it all works.\n"
        "\n"
        "Try changing the line with:\n"
        "\n"
        "```Python\n"
        '    return {"item_name": item.name, "item_id": item_id}\n'
        "```\n"
        "\n"
        "...from:\n"
        "\n"
        "```Python\n"
        '        ... "item_name": item.name ...\n'
        "```\n"
        "\n"
        "...to:\n"
        "\n"
        "```Python\n"
        '        ... "item_price": item.price ...\n'
        "```\n"
        "\n"
        "...and see how your editor will auto-complete the attributes and know their types:\n"
        "\n"
        "![editor support](https://fastapi.tiangolo.com/img/vscode-completion.png)\n"
        ""
    ),
    "index.md",
    421,
)


@pytest.mark.parametrize("window", [True, False], ids=["cited_lines", "control_whole_passage_half"])
def test_a_sentence_held_by_its_words_alone_needs_most_of_them_on_its_cited_lines(monkeypatch, window):
    """ "… by using the names of the parameters in the order they are declared" adds two words to the question,
    "order" and "declared"; the lines it was cited to say "declared" only (dev10 c1005, an invented rule). With
    the old floor - half of the added words anywhere in the passage - it was kept."""
    if not window:
        monkeypatch.setattr(claims, "WORDS_ONLY_FLOOR", evidence_lines.TERM_FLOOR)
        monkeypatch.setattr(ClaimChecker, "_window_terms", lambda self, span: self._lines[span[0]].terms)
    question = "How does FastAPI name the keys of the body when a path operation has two body parameters?"
    answer = (
        "FastAPI names the keys of the body when a path operation has two body parameters by using the names of"
        " the parameters in the order they are declared."
    )
    assert _check([FEATURES], question, answer).supported is not window
    # a sentence its cited lines do state stays
    true = "As the `q` parameter is declared with `= None`, it is optional."
    assert _check([FEATURES], "Is the q parameter optional?", true).supported


EMBED_PAGE = _evidence(
    "By default, **FastAPI** will then expect its body directly.\n"
    "\n"
    "But if you want it to expect a JSON with a key `item`, you can use the special `Body` parameter `embed`:\n"
    "\n"
    "item: Annotated[Item, Body(embed=True)]",
    "body-multiple-params.md",
    124,
)
EMBED_RECAP = _evidence(
    "And you can instruct **FastAPI** to embed the body in a key even when there is only a single parameter declared.",
    "body-multiple-params.md",
    169,
)


def test_a_name_the_sentence_writes_as_code_is_cited_where_the_source_writes_it_as_code():
    """dev10 t1004: the 1.5B cited "… is `embed` [1]" to the recap line where "embed" is a verb; the line that
    names the parameter `embed` states it. Control: a sentence writing it as prose keeps the nearer match."""
    question = "Which Body parameter makes FastAPI expect a single body model inside a key named after the parameter?"
    said = "The Body parameter that makes FastAPI expect a single body model inside a key named after the parameter"
    claim = _check([EMBED_RECAP, EMBED_PAGE], question, f"{said} is `embed` [1].")
    assert claim.supported and claim.citations == ["body-multiple-params.md:L126-126"]
    prose = _check([EMBED_RECAP, EMBED_PAGE], question, "You can instruct FastAPI to embed the body in a key [1].")
    assert prose.supported and prose.citations == ["body-multiple-params.md:L169-169"]


RELEASE_070 = _evidence(
    "## 0.70.0\n"
    "### Internal\n"
    "* Finally to FastAPI `0.70.0`, just upgrading Starlette to the latest version `0.16.0` with additional bug fixes.",
    "release-notes.md",
    5732,
)


def test_a_model_sentence_pointing_back_to_a_removed_one_goes_with_it():
    """fq42 (a feature the docs never mention): the 1.5B's "… added native Kafka consumer support is 0.70.0"
    was removed, and "This can be found in the release notes for that version, which states: '<a true line>'"
    stayed - vouching for the removed claim. Control: after a kept sentence the same pointing sentence stays."""
    from kb_agent.agent.citations import CheckedAnswer

    question = "Which version of FastAPI added native Kafka consumer support?"
    quote = (
        'This can be found in the release notes for that version, which states: "Finally to FastAPI `0.70.0`, '
        'just upgrading Starlette to the latest version `0.16.0` with additional bug fixes." [1]'
    )
    checked = CheckedAnswer([RELEASE_070], question)
    shown = checked.add_text(
        f"The version of FastAPI that added native Kafka consumer support is 0.70.0 [1]. {quote}", written=True
    )
    assert shown == "" and [c.supported for c in checked.claims] == [False, False]
    kept = CheckedAnswer([RELEASE_070], "Which Starlette version did FastAPI 0.70.0 upgrade to?")
    shown = kept.add_text(f"FastAPI 0.70.0 upgraded Starlette to `0.16.0` [1]. {quote}", written=True)
    assert [c.supported for c in kept.claims] == [True, True]


QUERY_MODELS = _evidence(
    "# Query Parameter Models\n"
    "If you have a group of query parameters that are related, you can create a Pydantic model to declare them.\n"
    "This is supported since FastAPI version `0.115.0`.",
    "query-param-models.md",
    7,
)


def test_a_sentence_that_tells_of_an_end_needs_lines_that_tell_of_one():
    """dev10 u1002 (a false premise): "The version that removed support for query parameter models is 0.115.0"
    was cited to "This is supported since FastAPI version 0.115.0". Control: the added-in sentence is held."""
    question = "Which FastAPI version removed support for query parameter models?"
    removed = _check([QUERY_MODELS], question, "Support for query parameter models was removed in 0.115.0 [1].")
    assert not removed.supported
    added = _check([QUERY_MODELS], question, "Query parameter models are supported since 0.115.0 [1].")
    assert added.supported
    dropped = _evidence("FastAPI 0.128.0 dropped support for `pydantic.v1`.", "migrate.md", 11)
    assert _check(
        [dropped], "Which version dropped pydantic.v1?", "Version 0.128.0 removed `pydantic.v1` [1]."
    ).supported


FRONTEND_FALLBACK = _evidence(
    "## Disable Fallback\n\n"
    "If you don't want to serve a fallback file for missing frontend paths, use `fallback=None`:",
    "frontend.md",
    99,
)


@pytest.mark.parametrize(("anchor", "kept"), [("app.frontend()", True), ("app.use()", False), ("app.state", False)])
def test_a_method_asked_about_is_named_by_its_own_name(anchor, kept):
    """dev11 t1110: asked which fallback value stops `app.frontend()` from serving a fallback file, the line
    that says `fallback=None` "for missing frontend paths" is on the question - a method is named by its own
    name, whatever object the example calls it on. Controls: a name under four letters (`use`, which the line
    says as a verb), a name the line lacks."""
    from kb_agent.agent.citations import CheckedAnswer

    question = f"Which fallback value stops {anchor} from serving a fallback file for missing paths?"
    checked = CheckedAnswer([FRONTEND_FALLBACK], question, anchors=[anchor])
    (sentence,) = split_sentences(
        "If you don't want to serve a fallback file for missing frontend paths, use `fallback=None` [1]."
    )
    assert bool(checked.add(sentence)) is kept and checked.claims[0].off_question is not kept


ENTRYPOINT = _evidence(
    "如果你的代码结构如下：\n\n```\n.\n├── backend\n│   ├── main.py\n│   ├── __init__.py\n```\n\n"
    '那么你可以将 `entrypoint` 设置为：\n\n```toml\n[tool.fastapi]\nentrypoint = "backend.main:app"\n```',
    "zh/fastapi-cli.md",
    78,
)


@pytest.mark.parametrize(
    ("anchor", "rule", "kept"),
    [
        ("backend/main.py", True, True),
        ("backend/main.py", False, False),  # control: a path named only as written
        ("backend/app.py", True, False),  # neither `backend.app` nor a tree listing app.py
        ("frontend/main.py", True, False),
    ],
)
def test_a_path_asked_about_is_named_by_its_module_or_a_tree_listing_it(monkeypatch, anchor, rule, kept):
    """dev29 z2902 (代码放在 backend/main.py 里时，entrypoint 应该设置成什么？): the page writes the path as a
    tree and as the module `backend.main`, never "backend/main.py", so the quoted `entrypoint = …` line was
    off the question and the answer refused."""
    from kb_agent.agent import citations

    if not rule:
        monkeypatch.setattr(citations, "_path_named", lambda said, anchor: False)
    question = f"代码放在 {anchor} 里时，entrypoint 应该设置成什么？"
    checked = citations.CheckedAnswer([ENTRYPOINT], question, anchors=[anchor])
    (sentence,) = split_sentences('entrypoint = "backend.main:app" [1]')
    assert bool(checked.add(sentence)) is kept


SPEC_STUDY = _evidence(
    "## Investigation\n"
    "Before even starting to code **FastAPI**, the author spent several months studying the specs for OpenAPI,"
    " JSON Schema and OAuth2.",
    "history-design-future.md",
    37,
)


def test_a_sentence_that_denies_something_needs_lines_that_deny_something(monkeypatch):
    """A sentence that negates ("did not spend several months studying the specs") holds every word of a line
    that affirms it; the line's words are there, its polarity is not. Controls: the affirming sentence is held;
    a denial cited to a line that denies is held; with the rule off the false denial is held too."""
    question = "How long did the author of FastAPI study the OpenAPI specs?"
    denial = "The author did not spend several months studying the specs for OpenAPI [1]."
    assert not _check([SPEC_STUDY], question, denial).supported
    affirmed = "The author spent several months studying the specs for OpenAPI [1]."
    assert _check([SPEC_STUDY], question, affirmed).supported
    denied = _evidence("The author did not spend a single month on the specs for OpenAPI.", "history.md", 9)
    assert _check([denied], question, "The author did not spend a month on the specs for OpenAPI [1].").supported
    monkeypatch.setattr(claims, "NEGATES", re.compile(r"(?!x)x"))
    assert _check([SPEC_STUDY], question, denial).supported


@pytest.mark.parametrize("rule", [True, False], ids=["same_language_page", "control_cited_source_first"])
def test_an_english_sentence_is_cited_to_the_english_page_when_its_translation_says_it_alike(monkeypatch, rule):
    """dev15 t1510 with the model: "… is [encode/broadcaster] [1]" was cited to the Chinese translation of the
    line (the source the model named first); the English page states it in the same line."""
    zh = _evidence(
        "如果您需要与 FastAPI 集成更简单但更健壮的方案，支持 Redis、PostgreSQL 或其他，请查看 "
        "[encode/broadcaster](https://github.com/encode/broadcaster)。",
        "zh/docs/advanced/websockets.md", 177,
    )  # fmt: skip
    en = _evidence(
        "If you need something easy to integrate with FastAPI but that is more robust, supported by Redis, "
        "PostgreSQL or others, check [encode/broadcaster](https://github.com/encode/broadcaster).",
        "en/docs/advanced/websockets.md", 177,
    )  # fmt: skip
    if not rule:  # the control: the sentence read as a Chinese one, the Chinese page is its language's
        monkeypatch.setattr(claims, "has_cjk", lambda text: True)
    claim = _check(
        [zh, en],
        "Which project is suggested for broadcasting WebSocket messages backed by Redis or PostgreSQL?",
        "The project suggested for broadcasting WebSocket messages backed by Redis or PostgreSQL is "
        "[encode/broadcaster] [1].",
    )
    assert claim.supported
    assert claim.citations[0].startswith("en/" if rule else "zh/")


VERSIONS = _evidence(
    "## Pin your `fastapi` version { #pin-your-fastapi-version }\n\n"
    'The first thing you should do is to "pin" the version of **FastAPI** you are using.\n\n'
    "For example, let's say you are using version `0.112.0` in your app.",
    "en/docs/deployment/versions.md",
    11,
)


@pytest.mark.parametrize("rule", [True, False], ids=["owner_must_be_named", "control_no_rule"])
def test_a_version_number_is_held_only_for_the_name_the_lines_give_it(monkeypatch, rule):
    """dev14 u1404 with the model: "The minimum version of uv that FastAPI requires is 0.112.0" was kept,
    cited to the lines pinning FastAPI's version - the number is there, uv is not."""
    if not rule:
        monkeypatch.setattr(ClaimChecker, "_version_owner_held", lambda self, sentence, spans: True)
    question = "Which minimum version of uv does FastAPI require?"
    false = _check([VERSIONS], question, "The minimum version of uv that FastAPI requires is 0.112.0 [1].")
    assert false.supported is not rule
    true = _check([VERSIONS], question, "You could pin the version of FastAPI to 0.112.0 [1].")
    assert true.supported  # the heading and the line name FastAPI
    generic = _check([VERSIONS], question, "For example, you could use the exact version 0.112.0 [1].")
    assert generic.supported  # "the exact version" names no one


@pytest.mark.parametrize("rule", [True, False], ids=["anchor_is_no_statement", "control_anchor_read"])
def test_a_headings_anchor_states_nothing(monkeypatch, rule):
    """Stop 39, fq25 with the model: "… is Pydantic-settings [1]" was cited to "## Pydantic `Settings`
    { #pydantic-settings }", whose anchor is a link target, not words the page states."""
    if not rule:
        monkeypatch.setattr(evidence_lines, "HEADING_ANCHOR", re.compile(r"(?!)"))
    text = "## Pydantic `Settings` { #pydantic-settings }\n\nSettings come from the environment."
    heading = _evidence(text, "s.md", 25)
    claim = _check([heading], "Which package reads settings?", "Pydantic-settings provides the settings [1].")
    assert claim.supported is not rule


TIMES_EN = """* `datetime.time`:
    * A Python `datetime.time`.
    * In requests and responses will be represented as a `str` in ISO 8601 format, like: `14:23:55.003`.
* `datetime.timedelta`:
    * A Python `datetime.timedelta`.
    * In requests and responses will be represented as a `float` of total seconds."""
TIMES_ZH = """* `datetime.time`:
    * 一个 Python `datetime.time`.
    * 在请求和响应中将表示为 ISO 8601 格式的 `str` ，比如:  `14:23:55.003`.
* `datetime.timedelta`:
    * 一个 Python `datetime.timedelta`.
    * 在请求和响应中将表示为 `float` 代表总秒数。"""


@pytest.mark.parametrize("rule", [True, False], ids=["retry_same_language", "control_any_language"])
def test_a_premise_the_english_page_fails_is_not_held_by_its_translation(monkeypatch, rule):
    """check-set ck04 with the model: "A datetime.timedelta is represented as a float of total seconds …" was
    cited to the English list header "* `datetime.timedelta`:", which failed the premise check (the sibling
    items say "represented" more), and the retry took the Chinese header, where the words cannot be compared."""
    if not rule:
        monkeypatch.setattr(ClaimChecker, "_retry_order", lambda self, sentence, order, used: [
            i for i in order if i not in used
        ])  # fmt: skip
    en = _evidence(TIMES_EN, "en/docs/tutorial/extra-data-types.md", 33)
    zh = _evidence(TIMES_ZH, "zh/docs/tutorial/extra-data-types.md", 33)
    claim = _check(
        [en, zh],
        "How is a datetime.timedelta represented in requests and responses?",
        "A datetime.timedelta is represented as a float of total seconds in requests and responses [1].",
    )
    assert any(c.startswith("zh/") for c in claim.citations) is not rule


WEBSOCKETS_REFERENCE = _evidence(
    "# WebSockets\n"
    "When defining WebSockets, you normally declare a parameter of type `WebSocket`.\n"
    "```python\n"
    "from fastapi.websockets import WebSocketDisconnect, WebSocketState\n"
    "```\n",
    "reference/websockets.md",
    50,
)


def test_code_a_removed_model_sentence_introduced_goes_with_it():
    """dev16 u1603 ("How do I enable gzip compression of WebSocket messages?", never said): the model invented a
    `gzip` parameter and wrote a code block under it; every sentence was removed but one import line copied from
    a page - a true line under an invented claim answers nothing. Control: after a kept sentence the same code
    block stays."""
    from kb_agent.agent.citations import CheckedAnswer

    code = "\n```python\nfrom fastapi.websockets import WebSocketDisconnect, WebSocketState\n```"
    invented = "You can set the `gzip` parameter of the `WebSocket` class to `True` [1]. For example:" + code
    checked = CheckedAnswer([WEBSOCKETS_REFERENCE], "How do I enable gzip compression of WebSocket messages?")
    assert checked.add_text(invented, written=True) == "" and checked.kept == 0
    kept = CheckedAnswer([WEBSOCKETS_REFERENCE], "How do I declare a WebSocket parameter?")
    said = "When defining WebSockets, you normally declare a parameter of type `WebSocket` [1]." + code
    kept.add_text(said, written=True)
    assert kept.kept == 2 and "WebSocketState" in kept.body


RELEASE_NOTE = _evidence(
    "* ✨ Export `WebSocketState` in `fastapi.websockets`. PR [#4376](https://github.com/tiangolo/fastapi/pull/4376)"
    " by [@matiuszka](https://github.com/matiuszka).",
    "release-notes.md",
    5095,
)


@pytest.mark.parametrize("rule", [True, False], ids=["whole_code_name", "control_prefix_and_link_count"])
def test_code_is_stated_by_a_whole_name_outside_link_targets(monkeypatch, rule):
    """check ck15 with the model: "…可以从 `fastapi` 模块导入" was kept, cited to a line saying
    `fastapi.websockets` and linking to github.com/tiangolo/fastapi/…: neither states the module `fastapi`."""
    if not rule:
        monkeypatch.setattr(evidence_lines, "holds_code", holds)
    question = "WebSocketDisconnect 和 WebSocketState 可以从哪个模块导入？"
    wrong = _check([RELEASE_NOTE], question, "WebSocketState 可以从 `fastapi` 模块导入。")
    assert wrong.supported is not rule
    right = _check([RELEASE_NOTE], question, "WebSocketState 可以从 `fastapi.websockets` 模块导入。")
    assert right.supported


GET_OPENAPI = _evidence(
    "And that function `get_openapi()` receives as parameters:\n\n* `title`: The OpenAPI title.\n"
    "* `summary`: A short summary of the API.\n\n/// tip\n\nYou can pass `app.routes` to it.\n\n///\n\n"
    "/// note\n\nThe parameter `summary` is available in OpenAPI 3.1.0 and above.\n\n///",
    "extending-openapi.md",
    21,
)


@pytest.mark.parametrize("tie", [True, False], ids=["passage_ties_name_to_anchor", "control_lines_around_only"])
def test_a_sentence_on_a_name_the_question_ties_to_its_anchor_is_on_the_question(monkeypatch, tie):
    """dev22 t2209 (Since which OpenAPI version is the summary parameter of get_openapi available?) lost its
    answer, the note on `summary` ten lines below the parameter list of `get_openapi()`, as off the question."""
    from kb_agent.agent.citations import CheckedAnswer

    if not tie:
        monkeypatch.setattr(CheckedAnswer, "_tied_in_section", lambda self, claim: False)
    question = "Since which OpenAPI version is the summary parameter of get_openapi available?"
    checked = CheckedAnswer([GET_OPENAPI], question, anchors=["get_openapi"])
    (sentence,) = split_sentences("The parameter `summary` is available in OpenAPI 3.1.0 and above [1].")
    assert bool(checked.add(sentence)) is tie
    other = CheckedAnswer([GET_OPENAPI], question, anchors=["get_openapi"])
    (unasked,) = split_sentences("You can pass `app.routes` to it [1].")  # a name the question does not say
    assert other.add(unasked) == "" and other.claims[0].off_question


VERSIONS_ZH = _evidence(
    "## 关于Starlette { #about-starlette }\n\n你不应该固定`starlette`的版本。\n\n"
    "不同版本的 **FastAPI** 将使用特定的较新版本的 Starlette。",
    "zh/versions.md",
    75,
)


STARLETTE_ZH = [  # the name is background: half the sources say it
    _evidence("**FastAPI** 站在 Starlette 和 Pydantic 的肩膀之上。", "zh/index.md", 10),
    _evidence("使用 **FastAPI** 编写测试非常简单（感谢 Starlette）。", "zh/testing.md", 3),
]


def test_a_short_chinese_line_quoted_word_for_word_is_a_quote(monkeypatch):
    """dev28 z2804 (我应该固定 starlette 的版本吗？): the line, 19 characters, fell under the 20 a quote needs, and
    with every word in the question nothing else could show it was stated: the answer became a refusal."""
    question = "我应该固定 starlette 的版本吗？"
    sources = [VERSIONS_ZH, *STARLETTE_ZH]
    quoted = _check(sources, question, "你不应该固定`starlette`的版本。")
    assert quoted.supported and quoted.citations == ["zh/versions.md:L77-77"]
    monkeypatch.setattr(claims, "cjk_chars", lambda text: 0)  # control: characters counted as letters
    assert not _check(sources, question, "你不应该固定`starlette`的版本。").supported


MAX_LENGTH = _evidence(  # query-params-str-validations.md, the lines as they are
    "## Add `Query` to `Annotated` in the `q` parameter { #add-query-to-annotated-in-the-q-parameter }\n"
    "\n"
    "Now that we have this `Annotated` where we can put more information (in this case some additional"
    " validation), add `Query` inside of `Annotated`, and set the parameter `max_length` to `50`:\n"
    "\n"
    "{* ../../docs_src/query_params_str_validations/tutorial002_an_py310.py hl[9] *}\n"
    "\n"
    "Notice that the default value is still `None`, so the parameter is still optional.\n"
    "\n"
    "But now, having `Query(max_length=50)` inside of `Annotated`, we are telling FastAPI that we want"
    " it to have **additional validation** for this value, we want it to have maximum 50 characters. 😎\n"
    "\n"
    "/// tip\n"
    "\n"
    "Here we are using `Query()` because this is a **query parameter**. Later we will see others like"
    " `Path()`, `Body()`, `Header()`, and `Cookie()`, that also accept the same arguments as `Query()`.\n"
    "\n"
    "///\n"
    "\n",
    "query-params-str-validations.md",
    64,
)


@pytest.mark.parametrize("rule", [True, False], ids=["value_of_the_subject_said", "control_any_value_passes"])
def test_a_model_sentence_giving_a_value_to_the_question_subject_cites_lines_about_it(rule):
    """dev29 u2903 (What is the maximum length of a regular expression pattern that Query accepts?, never said):
    the model answered "… a regular expression pattern … is 50 characters [1]" cited to `Query(max_length=50)`,
    whose lines never speak of a pattern; the 50 and the other words were there, so it passed."""
    from kb_agent.agent.citations import CheckedAnswer

    question = "What is the maximum length of a regular expression pattern that Query accepts?"
    subjects = {"maximum", "express", "pattern"} if rule else set()  # the question's rarest words, as measured
    query_pages = [  # Query on most pages found: the name frames the sentence, its premise is not checked
        _evidence("You can also declare `Query` parameters with `Annotated`.", "query-params.md", 12),
        _evidence("`Query`, `Path` and others are functions that return classes.", "params.md", 30),
    ]
    checked = CheckedAnswer([MAX_LENGTH, *query_pages], question, subjects=subjects)
    (sentence,) = split_sentences(
        "The maximum length of a regular expression pattern that Query accepts is 50 characters [1]."
    )
    assert bool(checked.add(sentence, written=True)) is not rule
    ok = CheckedAnswer([MAX_LENGTH, *query_pages], "What is the maximum length of q?", subjects={"length"})
    (kept,) = split_sentences("The maximum length of q is 50 characters [1].")
    assert ok.add(kept, written=True)  # the lines say what the value is of


def test_a_model_sentence_giving_a_name_is_not_held_to_the_question_subject_words():
    """dev12 z1203 with the model (FastAPI 的作者最终决定使用哪个库来处理数据校验？): "…决定使用 Pydantic 处理数据
    校验" cited to the features page's Pydantic lines, which never say 作者 (the author) or 决定 (decided). A name
    is checked as a name; the subject rule is for numbers, which a sentence can pin on the wrong thing."""
    from kb_agent.agent.citations import CheckedAnswer

    features = _evidence(
        "### Pydantic 特性\n\n**FastAPI** 完全兼容且基于 **Pydantic**。所有数据校验都由 **Pydantic** 处理。",
        "zh/features.md",
        119,
    )
    others = [
        _evidence("**FastAPI** 站在 Starlette 和 Pydantic 的肩膀之上。", "zh/index.md", 10),
        _evidence("你可以用 Pydantic 模型声明请求体。", "zh/body.md", 3),
    ]
    checked = CheckedAnswer(
        [features, *others], "FastAPI 的作者最终决定使用哪个库来处理数据校验？", subjects={"作者", "决定", "最终"}
    )
    (sentence,) = split_sentences("FastAPI 的作者最终决定使用 Pydantic 处理数据校验[1]。")
    assert checked.add(sentence, written=True)
