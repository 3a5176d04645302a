"""Extractive answers that read a line in its context: an import statement names its module, a line
introducing a code block is about the names the block lists, a sentence is completed by the one that says
its consequence or what the thing is instead."""

from __future__ import annotations

import pytest

from conftest import evidence_under
from kb_agent.agent import extractive, name_kinds, quote_selection, reasons
from kb_agent.agent.extractive import extractive_sentences

_evidence = evidence_under


def _weights(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


TRUSTED_HOST = """The following arguments are supported:

* `allowed_hosts` - A list of domain names that should be allowed as hostnames.
* `www_redirect` - If set to True, requests to non-www versions of the allowed hosts will be redirected."""
REFERENCE = """::: fastapi.middleware.trustedhost.TrustedHostMiddleware

It can be imported from `fastapi`:

```python
from fastapi.middleware.trustedhost import TrustedHostMiddleware
```"""


@pytest.mark.parametrize("rule", [True, False], ids=["import_names_its_module", "control_no_rule"])
def test_asked_which_module_an_import_statement_names_it(monkeypatch, rule):
    """dev22 x2201 (TrustedHostMiddleware 可以从哪个模块导入？) was answered with the English `allowed_hosts`
    line, which names a parameter: the import statement names the module, but not in backticks."""
    if not rule:
        monkeypatch.setattr(name_kinds, "_MODULE_KINDS", frozenset())
    sources = [
        _evidence(TRUSTED_HOST, "middleware.md", ["Advanced Middleware", "`TrustedHostMiddleware`"], 64),
        _evidence(REFERENCE, "reference/middleware.md", ["Middleware"], 31),
    ]
    ranked = extractive.rank("TrustedHostMiddleware 可以从哪个模块导入？", sources, weights=_weights)
    assert ("fastapi.middleware.trustedhost" in ranked[0].text) is rule


SECURITY_TOOLS = """There are multiple tools that you can use to create those dependables.

You can import them from `fastapi.security`:

```python
from fastapi.security import (
    APIKeyCookie,
    APIKeyHeader,
    HTTPBearer,
)
```

Read more about them in the FastAPI docs about Security."""


@pytest.mark.parametrize("rule", [True, False], ids=["block_read_with_its_line", "control_no_block"])
def test_a_line_introducing_a_code_block_is_about_the_names_it_lists(monkeypatch, rule):
    """dev22 t2213 (Which module are security tools like APIKeyHeader and HTTPBearer imported from?) was
    refused: the line naming the module says none of the classes the question names; the block it introduces
    lists them."""
    if not rule:
        monkeypatch.setattr(extractive, "code_after", lambda unit, evidence: "")
    sources = [_evidence(SECURITY_TOOLS, "reference/security/index.md", ["Security Tools"], 7)]
    question = "Which module are security tools like APIKeyHeader and HTTPBearer imported from?"
    rare = {"apikeyheader": 6.0, "httpbearer": 6.0}  # the classes are rare in the docs, "import" is everywhere
    found = extractive_sentences(question, sources, weights=lambda asked: {t: rare.get(t, 1.5) for t in asked})
    assert any("`fastapi.security`" in s.text for s in found) is rule


ENCODER = (
    "It receives an object, like a Pydantic model, and returns a JSON compatible version.\n\n"
    "The result of calling it is something that can be encoded with the Python standard `json.dumps()`.\n\n"
    "It doesn't return a large `str` containing the data in JSON format (as a string). It returns a Python "
    "standard data structure (e.g. a `dict`) with values and sub-values that are all compatible with JSON."
)


@pytest.mark.parametrize("rule", [True, False], ids=["goes_on_with_what_it_is", "control_no_rule"])
def test_a_line_saying_what_a_thing_is_not_is_quoted_with_what_it_is(monkeypatch, rule):
    """dev22 c2201 (Does jsonable_encoder return a string with the data in JSON format?) was answered "It
    doesn't return a large `str` …" alone; the same paragraph goes on "It returns a … `dict` …"."""
    if not rule:
        monkeypatch.setattr(quote_selection, "contrast_after", lambda unit, units: None)
    sources = [_evidence(ENCODER, "encoder.md", ["JSON Compatible Encoder"], 21)]
    found = extractive_sentences(
        "Does jsonable_encoder return a string with the data in JSON format?", sources, weights=_weights
    )
    assert found[0].text.startswith("It doesn't return")
    assert any("`dict`" in s.text for s in found) is rule


CACHE = """### Cache the OpenAPI schema

You can use the property `.openapi_schema` as a "cache", to store your generated schema.

That way, your application won't have to generate the schema every time a user opens your API docs.

It will be generated only once."""


@pytest.mark.parametrize("rule", [True, False], ids=["benefit_is_a_reason", "control_why_only"])
def test_asked_the_benefit_the_line_saying_what_it_gains_comes_with_it(monkeypatch, rule):
    """dev22 c2202 (What is the benefit of storing the generated schema in .openapi_schema?) was answered with
    the line saying it can be used as a cache, without the next one, "That way, … won't have to generate …"."""
    if not rule:
        monkeypatch.setattr(quote_selection, "asks_benefit", lambda question: False)
        monkeypatch.setattr(extractive, "POINTED_TO", 0.0)  # "That way, …" also reads the line it points to
    sources = [_evidence(CACHE, "extending-openapi.md", ["Extending OpenAPI"], 68)]
    question = "What is the benefit of storing the generated schema in .openapi_schema?"
    rare = {"openapi_schema": 6.0, "store": 3.0}
    found = extractive_sentences(question, sources, weights=lambda asked: {t: rare.get(t, 1.5) for t in asked})
    assert found[0].text.startswith("You can use the property")
    assert any(s.text.startswith("That way") for s in found) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["restated_number_once", "control_both_quoted"])
def test_the_same_number_restated_on_another_page_is_quoted_once_from_the_page_asked_about(monkeypatch, rule):
    """dev22 x2202 (Cookie 参数模型从 FastAPI 哪个版本开始支持？) quoted the cookie page's note and the query
    model page's, which says the same version in other words about another feature."""
    if not rule:
        monkeypatch.setattr(quote_selection, "RESTATED", 1.01)
    sources = [
        _evidence("/// note\n\n自 FastAPI 版本 `0.115.0` 起支持此功能。🤓\n\n///", "zh/cookie-param-models.md",
                  ["Cookie 参数模型 { #cookie-parameter-models }"], 7),
        _evidence("/// note\n\nFastAPI 从 `0.115.0` 版本开始支持这个特性。🤓\n\n///", "zh/query-param-models.md",
                  ["查询参数模型 { #query-parameter-models }"], 7),
    ]  # fmt: skip
    found = extractive_sentences("Cookie 参数模型从 FastAPI 哪个版本开始支持？", sources, weights=_weights)
    assert [s.cited for s in found] == ([[1]] if rule else [[1], [2]])


FILES_NOTE = (
    "你可以在一个*路径操作*中声明多个 `File` 和 `Form` 参数，但不能同时声明希望以 JSON 接收的 `Body` 字段，"
    "因为此时请求体会使用 `multipart/form-data` 编码，而不是 `application/json`。"
)
FORMS_NOTE = (
    "你可以在一个*路径操作*中声明多个 `Form` 参数，但不能同时再声明要接收为 JSON 的 `Body` 字段，"
    "因为此时请求体会使用 `application/x-www-form-urlencoded` 而不是 `application/json` 进行编码。"
)


@pytest.mark.parametrize("rule", [True, False], ids=["twin_naming_less_unasked", "control_first_twin"])
def test_of_two_twins_saying_as_much_the_one_naming_less_the_question_does_not_is_quoted(monkeypatch, rule):
    """dev22 z2202 asked why Form parameters and a JSON Body cannot be declared together; the request files
    page's twin note (about `File` and `Form`, encoded as multipart/form-data) was quoted, not the forms page's."""
    if not rule:
        monkeypatch.setattr(quote_selection, "_unasked", lambda unit, question: 0)
    sources = [
        _evidence(FILES_NOTE, "zh/request-files.md", ["请求文件"], 130),
        _evidence(FORMS_NOTE, "zh/request-forms.md", ["表单数据"], 65),
    ]  # fmt: skip  # headings saying nothing of the question: the names decide, not the headings
    question = "为什么不能在同一个路径操作中同时声明 Form 参数和以 JSON 接收的 Body 字段？"
    found = extractive_sentences(question, sources, weights=_weights)
    assert len(found) == 1 and ("x-www-form-urlencoded" in found[0].text) is rule


MULTIPART = """The `python-multipart` package is automatically installed with **FastAPI** when you install it.

However, if you use the `uv add fastapi` command, the `python-multipart` package is not included by default.

To install it manually, add it to your project with:

```console
$ uv add python-multipart
```

This is because **OAuth2** uses "form data" for sending the `username` and `password`."""


@pytest.mark.parametrize("reach", [4, 0], ids=["explicit_reason_past_an_example", "control_neighbours_only"])
def test_asked_why_a_line_saying_it_gives_the_reason_a_few_lines_down_comes_with_the_best(monkeypatch, reach):
    """dev23 c2302 (Why does OAuth2 need the python-multipart package?) quoted the install lines; the reason,
    "This is because OAuth2 uses form data …", is past the command they introduce."""
    monkeypatch.setattr(reasons, "REASON_REACH", reach)
    if not reach:  # and "because" read as a cause anywhere (`extractive.gives_cause`) would find it too
        monkeypatch.setattr(extractive, "gives_cause", lambda text: False)
    sources = [_evidence(MULTIPART, "security/first-steps.md", ["Security - First Steps", "Run it"], 29)]
    found = extractive_sentences("Why does OAuth2 need the python-multipart package?", sources, weights=_weights)
    assert any("form data" in s.text for s in found) is (reach > 0)


TOKEN_URL = """When we create an instance of the `OAuth2PasswordBearer` class we pass in the `tokenUrl` parameter. This parameter contains the URL that the client will use to send the `username` and `password` in order to get a token.

/// tip

Here `tokenUrl="token"` refers to a relative URL `token` that we haven't created yet.

///

This parameter doesn't create that endpoint / *path operation*, but declares that the URL `/token` will be the one that the client should use to get the token.

We will soon also create the actual path operation."""  # noqa: E501 - the lines as the docs write them


@pytest.mark.parametrize("rule", [True, False], ids=["reads_what_it_points_to", "control_line_alone"])
def test_a_line_opening_this_is_read_with_the_lines_it_points_back_to_past_an_admonition(monkeypatch, rule):
    """dev23 c2303 (Does the tokenUrl parameter create the /token path operation?): "This parameter doesn't
    create that endpoint …" answers, but says none of `tokenUrl`; the line it points back to, past a tip, does
    (through "This parameter contains …", which points back in turn). Quoted, the chain comes with it."""
    if not rule:
        monkeypatch.setattr(extractive, "POINTED_TO", 0.0)
    sources = [_evidence(TOKEN_URL, "security/first-steps.md", ["Security - First Steps", "OAuth2PasswordBearer"])]
    question = "Does the tokenUrl parameter create the /token path operation?"
    rare = {"tokenurl": 6.0}
    found = extractive_sentences(question, sources, weights=lambda asked: {t: rare.get(t, 1.5) for t in asked})
    said = " ".join(s.text for s in found)
    assert ("doesn't create that endpoint" in said) is rule
    if rule:  # quoted after the lines it points back to, the `tokenUrl` line first
        assert found[0].text.startswith("When we create") and found[0].joins_next and found[1].joins_next


def test_a_chain_of_lines_pointing_back_is_shown_whole_after_the_claim_check():
    """Two quoted lines held for the one pointing back to them: both are shown with it (the check held only the
    last one before, and the `tokenUrl` line was lost)."""
    from kb_agent.agent.citations import CheckedAnswer

    sources = [_evidence(TOKEN_URL, "security/first-steps.md", ["Security - First Steps", "OAuth2PasswordBearer"])]
    question = "Does the tokenUrl parameter create the /token path operation?"
    checked = CheckedAnswer(sources, question)
    rare = {"tokenurl": 6.0}
    for sentence in extractive_sentences(question, sources, weights=lambda asked: {t: rare.get(t, 1.5) for t in asked}):
        checked.add(sentence)
    assert checked.body.startswith("When we create") and "doesn't create that endpoint" in checked.body
    assert checked.kept == 3
