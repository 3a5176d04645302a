"""The misses of stop 56's held-out set (`fastapi_docs_dev45.jsonl`), each with a control that turns its change
off: kinds asked in the plural "-ies", products and names given as a link's text, a name the question writes only
inside another, an address put together from the question's parts, a sentence's left-out example, reflexive
pronouns, what a way makes sure of, a code name asked whole, a neighbouring section titled by other code, a
modal glued to a noun, and how long."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, quoted_text, rare_weights
from kb_agent.agent import (
    answer_types,
    asked_code,
    citations,
    evidence_units,
    extractive,
    name_kinds,
    question_terms,
    reasons,
)
from kb_agent.agent.name_kinds import asked_kind
from kb_agent.agent.question_terms import key_terms
from kb_agent.text import tokenize as tokenize_module

CALLBACKS = evidence_under(
    "The actual callback is just an HTTP request.\n\n"
    "When implementing the callback yourself, you could use something like [HTTPX](https://www.python-httpx.org) "
    "or [Requests](https://requests.readthedocs.io/).",
    "openapi-callbacks.md",
    start=67,
)


@pytest.mark.parametrize("rule", [True, False], ids=["libraries_asks_a_library", "control_no_ies_plural"])
def test_which_libraries_asks_for_libraries_named_as_links(monkeypatch, rule):
    """dev45 t4503: "Which libraries …" asked no kind ("libraries" is no "library" + s), and the line naming HTTPX
    and Requests, as links, lost to "The actual callback is just an HTTP request"."""
    if not rule:
        monkeypatch.setattr(name_kinds, "asked_kind", lambda question: None)
        monkeypatch.setattr(extractive, "asked_kind", lambda question: None)
    weights = rare_weights({"librari": 5.0, "suggest": 4.0, "actual": 3.0, "callback": 3.0, "page": 1.0})
    said = extractive.extractive_sentences(
        "Which libraries does the callbacks page suggest for sending the actual callback request?",
        [CALLBACKS],
        weights=weights,
    )
    assert any("HTTPX" in s.text for s in said) is rule
    assert asked_kind("Which libraries does it use?") == "library"
    assert asked_kind("What properties does it have?") == "property"


@pytest.mark.parametrize("rule", [True, False], ids=["link_text_is_a_product", "control_plain_words_only"])
def test_a_product_is_named_by_a_link_text(monkeypatch, rule):
    if not rule:
        monkeypatch.setattr(name_kinds, "_PRODUCT", re.compile(r"(?<=[a-z,\u4e00-\u9fff] )([A-Z][\w.+-]*)"))
    given = name_kinds.products("you could use something like [HTTPX](https://x.org) or [Requests](https://y)", "")
    assert ({"HTTPX", "Requests"} <= given) is rule


URL_TYPE = evidence_under(
    "It will have a *path operation* that will receive an `Invoice` body, and a query parameter `callback_url` "
    "that will contain the URL for the callback.\n\n"
    "The `callback_url` query parameter uses a Pydantic [Url](https://pydantic.dev/networks/) type.",
    "openapi-callbacks.md",
    start=30,
)


@pytest.mark.parametrize("rule", [True, False], ids=["url_inside_callback_url_is_new", "control_substring"])
def test_a_name_the_question_writes_only_inside_another_is_new(monkeypatch, rule):
    """dev45 t4502: "What type does the callback_url query parameter use …?" - the line naming the type `Url` (a
    link's text) named nothing new: "url" is inside "callback_url"."""
    if not rule:
        monkeypatch.setattr(name_kinds, "_written_in", lambda name, question: name.lower() in question.lower())
    question = "What type does the callback_url query parameter use in the invoices example?"
    assert ("Url" in name_kinds.new_names("a Pydantic [Url] type", question, "type")) is rule
    said = quoted_text(question, [URL_TYPE])
    assert "Pydantic [Url]" in said if rule else True


COMPOSED = evidence_under(
    "then *your API* will process the invoice, and at some point later, send a callback request to the "
    "`callback_url` (the *external API*):\n\n```\nhttps://www.external.org/events/invoices/2expen51ve\n```\n\n"
    "with a JSON body containing something like:\n\n/// tip\n\nNotice how the callback URL used contains the URL "
    "received as a query parameter in `callback_url` (`https://www.external.org/events`) and also the invoice `id` "
    "from inside of the JSON body (`2expen51ve`).\n\n///",
    "openapi-callbacks.md",
    start=137,
)


@pytest.mark.parametrize("rule", [True, False], ids=["composed_address_is_new", "control_restates"])
def test_an_address_put_together_from_the_questions_parts_is_no_restatement(monkeypatch, rule):
    """dev45 t4505: asked to which URL the callback goes, given its two parts, the address line "restated" the
    question (every word of it is the question's) and lost to the line explaining how it is put together."""
    if not rule:
        monkeypatch.setattr(name_kinds, "_BARE_URL", re.compile(r"^$"))
    question = ("To which URL is the callback sent when callback_url is https://www.external.org/events and the "
                "invoice id is 2expen51ve?")  # fmt: skip
    said = quoted_text(question, [COMPOSED])
    assert ("https://www.external.org/events/invoices/2expen51ve" in said) is rule


DEBUGGING = evidence_under(
    "Let's say your file is named `myapp.py`.\n\nIf you run it with:\n\n```console\n$ python myapp.py\n```\n\n"
    "then the internal variable `__name__` in your file, created automatically by Python, will have as value the "
    'string `"__main__"`.\n\nSo, the section:\n\n```Python\n    uvicorn.run(app, host="0.0.0.0", port=8000)\n```\n\n'
    "will run.\n\nThis won't happen if you import that module (file).\n\n"
    "in that case, the automatically created variable `__name__` inside of `myapp.py` will not have the value "
    '`"__main__"`.',
    "debugging.md",
    start=31,
)


def test_a_sentence_broken_by_a_short_example_speaks_of_it(monkeypatch):
    """dev45 t4515: "What value does __name__ have when you run myapp.py directly …?" - "If you run it with: …
    then … will have as value "__main__"" did not hold "myapp.py" (it is in the example between) and lost to the
    line saying it will *not* have that value. Control: without the example's words it holds less."""
    weights = rare_weights({"myapp.py": 6.0, "__name__": 6.0, "direct": 3.0})
    question = "What value does __name__ have when you run myapp.py directly with python?"

    def joined_own() -> float:
        found = extractive.rank(question, [DEBUGGING], weights=weights)
        return next(u.own for u in found if u.text.startswith("If you run it with"))

    with_example = joined_own()
    monkeypatch.setattr(evidence_units, "RUN_ON_LINES", -1)
    assert with_example > joined_own()
    unit = next(u for u in evidence_units.units_of(0, DEBUGGING) if u.text.startswith("If you run it with"))
    assert "myapp.py" not in unit.terms  # the sentence's own words stay its own: the example is credited apart


def test_reflexive_pronouns_are_no_key_terms(monkeypatch):
    """dev45 c4522: "… wrapping the app in the middleware class myself?" - "myself", written on no page, was the
    question's rarest term."""
    assert "myself" not in key_terms("Why not wrap the app in the middleware class myself?")
    monkeypatch.setattr(question_terms, "QUESTION_TERMS", question_terms.QUESTION_TERMS - {"myself"})
    assert "myself" in key_terms("Why not wrap the app in the middleware class myself?")
    assert "yourself" in tokenize_module.FUNCTION_WORDS


MIDDLEWARE = evidence_under(
    "In general, ASGI middlewares are classes that expect to receive an ASGI app as the first argument.\n\n"
    "But FastAPI (actually Starlette) provides a simpler way to do it that makes sure that the internal "
    "middlewares handle server errors and custom exception handlers work properly.\n\n"
    "For that, you use `app.add_middleware()` (as in the example for CORS).\n\n"
    "`app.add_middleware()` receives a middleware class as the first argument and any additional arguments to be "
    "passed to the middleware.",
    "advanced/middleware.md",
    start=15,
)


@pytest.mark.parametrize("rule", [True, False], ids=["what_a_way_makes_sure_of", "control_no_such_cause"])
def test_why_use_a_way_is_answered_by_what_it_makes_sure_of(monkeypatch, rule):
    """dev45 c4522: "Why use app.add_middleware() instead of wrapping the app …?" - "For that, you use
    `app.add_middleware()`" follows the line saying what that way makes sure of: that is the reason."""
    if not rule:
        monkeypatch.setattr(extractive, "gives_cause", lambda text: False)
    said = quoted_text("Why use app.add_middleware() instead of wrapping the app in the middleware class myself?",
                       [MIDDLEWARE])  # fmt: skip
    assert said.startswith("But FastAPI") is rule
    assert reasons.gives_cause("… a simpler way to do it that makes sure that the internal middlewares …")


REDIRECTS = [
    evidence_under(
        "## `HTTPSRedirectMiddleware` { #httpsredirectmiddleware }\n\n"
        "Enforces that all incoming requests must either be `https` or `wss`.",
        "advanced/middleware.md",
        headings=["## `HTTPSRedirectMiddleware` { #httpsredirectmiddleware }"],
        start=54,
    ),
    evidence_under(
        "## `TrustedHostMiddleware` { #trustedhostmiddleware }\n\n"
        "* `www_redirect` - If set to True, requests to non-www versions of the allowed hosts will be redirected to "
        "their www counterparts. Defaults to `True`.",
        "advanced/middleware.md",
        headings=["## `TrustedHostMiddleware` { #trustedhostmiddleware }"],
        start=57,
    ),
    evidence_under(
        "Returns an HTTP redirect. Uses a 307 status code (Temporary Redirect) by default.",
        "advanced/custom-response.md",
        start=151,
    ),
]


@pytest.mark.parametrize("rule", [True, False], ids=["whole_code_name", "control_its_pieces"])
def test_a_code_name_asked_is_asked_whole(monkeypatch, rule):
    """dev45 u4541 (unanswerable): "What is the default redirect status code of HTTPSRedirectMiddleware?" was
    answered by `RedirectResponse`'s 307 - its page writes "redirect", a piece of the name asked - and by
    `TrustedHostMiddleware`'s `www_redirect`, in the section after the one naming the middleware asked."""
    if not rule:
        monkeypatch.setattr(asked_code, "code_names", lambda q, asked: {"httpsredirectmiddleware", "redirect"})
        monkeypatch.setattr(asked_code, "named_beside", lambda e, s, c, codes: set())
    found = extractive.rank("What is the default redirect status code of HTTPSRedirectMiddleware?", REDIRECTS)
    assert (not any("307" in u.text for u in found)) is rule


def test_a_section_titled_by_other_code_does_not_inherit_its_neighbours_name():
    contexts = [{"httpsredirectmiddleware": 1.0}, {}]
    codes = {"httpsredirectmiddleware"}
    assert asked_code.named_beside(REDIRECTS[1], REDIRECTS[:2], contexts, codes) == set()
    untitled = evidence_under("It also takes `www_redirect`.", "advanced/middleware.md", start=57)
    assert asked_code.named_beside(untitled, [REDIRECTS[0], untitled], contexts, codes) == codes


@pytest.mark.parametrize("rule", [True, False], ids=["modal_not_a_word", "control_glued_piece_kept"])
def test_a_modal_glued_to_a_noun_is_no_key_term(monkeypatch, rule):
    """dev45 z4531 "重复的请求头会以什么 Python 类型收到全部的值？" was refused: jieba cut "头会", which no page
    writes."""
    if not rule:
        monkeypatch.setattr(question_terms, "_GLUED_MODAL", re.compile(r"^$"))
        monkeypatch.setattr(question_terms, "guessed_word", lambda word: False)  # 头会 is no dictionary word either
    assert ("头会" not in key_terms("重复的请求头会以什么 Python 类型收到全部的值？")) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["how_long_needs_a_time", "control_any_number"])
def test_asked_how_long_a_line_must_give_a_time(monkeypatch, rule):
    """dev45 u4542 (unanswerable): "Uvicorn 的 worker 进程崩溃后多久会被重启？" was answered by
    "你需要一个外部组件来负责重新启动进程" - its "一" a number, and no time at all."""
    if not rule:
        monkeypatch.setattr(answer_types, "_ASKS_DURATION", re.compile(r"^$"))
    question = "Uvicorn 的 worker 进程崩溃后多久会被重启？"
    types = answer_types.asked_types(question)
    assert types
    assert answer_types.states_each(types, "你需要一个外部组件来负责重新启动进程", question) is not rule
    assert answer_types.states_each(types, "进程会在 5 秒后重启", question)
    took = "How long does it take?"
    assert answer_types.states_each(answer_types.asked_types(took), "about 30 seconds", took)


FILES = evidence_under('The response would be like:\n\n```JSON\n{\n    "data": {\n        "size": 1\n    }\n}\n```',
                       "request-files.md", start=118)  # fmt: skip


@pytest.mark.parametrize("rule", [True, False], ids=["fragment_states_nothing", "control_substring_kept"])
def test_a_model_answer_of_a_code_fragment_is_no_statement(monkeypatch, rule):
    """dev45 x4536 (with the model): "发送两个 X-Token 请求头时，响应是什么？" was answered '"data": { [1]' - a
    substring of an unrelated page's example, kept as "stated by its line"."""
    if not rule:
        monkeypatch.setattr(citations, "_FRAGMENT", re.compile(r"^$"))
    checked = citations.CheckedAnswer([FILES], "发送两个值为 foo 和 bar 的 X-Token 请求头时，响应是什么？")
    shown = checked.add_text('"data": { [1]', written=True)
    assert (shown == "" and checked.kept == 0) is rule


REQUEST_DIRECTLY = evidence_under(
    "You can read more details about the `Request` object in the official Starlette documentation site.\n\n"
    "/// note | Technical Details\n\nYou could also use `from starlette.requests import Request`.\n\n"
    "**FastAPI** provides it directly just as a convenience for you, the developer. But it comes directly from "
    "Starlette.\n\n///",
    "advanced/using-request-directly.md",
    start=48,
)
BIGGER = evidence_under(
    "The module `items` will have a variable `router` (`items.router`). This is the same one we created in the "
    "file `app/routers/items.py`, it's an `APIRouter` object.",
    "tutorial/bigger-applications.md",
    start=320,
)


@pytest.mark.parametrize("rule", [True, False], ids=["import_in_a_sentence", "control_line_start_only"])
def test_a_module_is_named_by_an_import_quoted_in_a_sentence(monkeypatch, rule):
    """dev46 t4606 / x4621: "From which module could I also import Request instead of from fastapi?" was answered
    with "The module `items` …": "You could also use `from starlette.requests import Request`" named no module
    (only an import at the start of a line did) and did not say the kind. The other import a page mentions
    answers where *else* to import from, not where to import from (dev10 x1001, blind bl19)."""
    if not rule:
        monkeypatch.setattr(name_kinds, "_QUOTED_IMPORT", re.compile(r"^$"))
    question = "From which module could I also import Request instead of from fastapi?"
    line = "You could also use `from starlette.requests import Request`."
    named = "starlette.requests" in name_kinds.new_names(line, question, "module")
    assert (named and name_kinds.says_kind(line, "module", question)) is rule
    weights = rare_weights({"modul": 4.0, "import": 2.5, "request": 2.0, "fastapi": 1.0})
    best = extractive.rank(question, [BIGGER, REQUEST_DIRECTLY], weights=weights)
    assert "starlette.requests" in best[0].text if rule else True
    # asked the module itself, the page's own import line answers, not the other one it mentions
    assert not name_kinds.new_names(line, "StaticFiles 类可以从哪个模块直接导入？", "模块")


HEADERS_ZH = evidence_under(
    "与*路径操作*通信时，以下面的方式发送两个 HTTP 请求头：\n\n```\nX-Token: foo\nX-Token: bar\n```\n\n响应结果是：\n\n"
    '```JSON\n{\n    "X-Token values": [\n        "bar",\n        "foo"\n    ]\n}\n```',
    "zh/docs/tutorial/header-params.md",
    start=69,
)
HEADERS_EN = evidence_under(
    "If you communicate with that *path operation* sending two HTTP headers like:\n\n```\nX-Token: foo\n"
    "X-Token: bar\n```\n\nThe response would be like:\n\n"
    '```JSON\n{\n    "X-Token values": [\n        "bar",\n        "foo"\n    ]\n}\n```',
    "en/docs/tutorial/header-params.md",
    start=69,
)


@pytest.mark.parametrize("rule", [True, False], ids=["response_example_quoted", "control_line_alone"])
@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("发送两个值为 foo 和 bar 的 X-Token 请求头时，响应是什么？", HEADERS_ZH),
        ("What response do I get when I send two X-Token headers with the values foo and bar?", HEADERS_EN),
    ],
    ids=["zh", "en"],
)
def test_asked_what_comes_back_the_response_example_is_quoted(monkeypatch, rule, question, source):
    """dev45 x4536: "…响应是什么？" was answered with the line introducing the request's two headers; the response is
    the example after "响应结果是：" (a line too short to be read at all) / "The response would be like:"."""
    if not rule:
        monkeypatch.setattr(extractive, "output_example", lambda unit, evidence: "")
    said = quoted_text(question, [source])
    assert ('"X-Token values"' in said) is rule


def test_a_response_model_question_asks_for_no_output_example():
    from kb_agent.agent.example_lines import ASKS_OUTPUT

    assert ASKS_OUTPUT.search("What would the response be for two X-Token headers?")
    assert not ASKS_OUTPUT.search("What response model does the path operation declare?")
    assert not ASKS_OUTPUT.search("What response status code is returned?")


@pytest.mark.parametrize("rule", [True, False], ids=["announcement_waits", "control_kept_alone"])
def test_a_model_sentence_announcing_what_follows_is_kept_only_with_it(monkeypatch, rule):
    """dev45 x4536 (with the model): the model answered only "响应结果是[1]：" - true of line 76, and no answer. An
    announcement is kept only when the sentence after it is."""
    if not rule:
        original = citations.CheckedAnswer.add

        def add(self, sentence, written=False):  # the announcement judged alone, as a statement
            return original(self, sentence, False) if written else original(self, sentence, written)

        monkeypatch.setattr(citations.CheckedAnswer, "add", add)
    checked = citations.CheckedAnswer([HEADERS_ZH], "发送两个值为 foo 和 bar 的 X-Token 请求头时，响应是什么？")
    shown = checked.add_text("响应结果是[1]：", written=True)
    assert (shown == "" and checked.kept == 0) is rule
    kept = citations.CheckedAnswer([HEADERS_EN], "What response do I get when I send two X-Token headers?")
    said = kept.add_text('The response would be like [1]: the "X-Token values" are "bar" and "foo" [1].', written=True)
    assert "The response would be like" in said and kept.kept >= 1
