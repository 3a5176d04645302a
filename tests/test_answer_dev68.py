"""Stop 68's held-out set (`fastapi_docs_dev68.jsonl`): a list whose items carry a note each ran past the span a
list may take and was quoted without its items, a longer list of names with one item that says more was dropped,
"… could be useful if …" was not read as a reason, a bare `--forwarded-allow-ips` was not read as the code asked
about, and a line giving a status code ("500 Internal Server Error") was not read as saying "status code"."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, quoted_text
from kb_agent.agent import answer_types, evidence_following, name_kinds, reasons
from kb_agent.agent.asked_code import code_names
from kb_agent.agent.evidence_units import units_of
from kb_agent.agent.question_terms import key_terms

TLS_TOOLS = evidence_under(
    "### Example Tools for HTTPS { #example-tools-for-https }\n\n"
    "Some of the tools you could use as a TLS Termination Proxy are:\n\n"
    "* Traefik\n    * Automatically handles certificate renewals ✨\n"
    "* Caddy\n    * Automatically handles certificate renewals ✨\n"
    "* Nginx\n    * With an external component like Certbot for certificate renewals\n"
    "* HAProxy\n    * With an external component like Certbot for certificate renewals\n"
    "* Kubernetes with an Ingress Controller like Nginx\n"
    "    * With an external component like cert-manager for certificate renewals\n"
    "* Handled internally by a cloud provider as part of their services (read below 👇)\n\n"
    "Another option is that you could use a **cloud service** that does more of the work including setting up HTTPS.",
    "en/docs/deployment/concepts.md",
    ["Deployments Concepts", "Security - HTTPS"],
    start=34,
)


def test_a_list_whose_items_carry_a_note_each_is_quoted_with_its_line(monkeypatch):
    """dev68 t6805 "Which tools could I use as a TLS Termination Proxy?": six items over thirteen lines; the
    control counts the items' notes toward the span again and the line's items are lost."""
    question = "Which tools could I use as a TLS Termination Proxy?"
    quoted = quoted_text(question, [TLS_TOOLS])
    assert quoted.startswith("Some of the tools you could use as a TLS Termination Proxy are:")
    assert "Traefik" in quoted and "HAProxy" in quoted
    monkeypatch.setattr(evidence_following, "QUOTE_SPAN", evidence_following.LIST_SPAN)  # control: notes count
    assert "Some of the tools" not in quoted_text(question, [TLS_TOOLS])


STARTUP_TOOLS = evidence_under(
    "Some examples of the tools that can do this job are:\n\n"
    "* Docker\n* Kubernetes\n* Docker Compose\n* Docker in Swarm Mode\n* Systemd\n* Supervisor\n"
    "* Handled internally by a cloud provider as part of their services\n* Others...",
    "en/docs/deployment/concepts.md",
    ["Deployments Concepts", "Running on Startup", "Example Tools to Run at Startup"],
    start=115,
)


def test_a_long_list_of_names_may_hold_one_longer_item():
    """dev68 x6803: eight items, one of them a sentence; two such items still make it no list of names."""
    unit = units_of(0, STARTUP_TOOLS)[0]
    assert "Systemd" in evidence_following.list_after(unit, STARTUP_TOOLS)
    systemd = "* Systemd, or any init system your distribution ships"
    longer = STARTUP_TOOLS.model_copy(update={"text": STARTUP_TOOLS.text.replace("* Systemd", systemd)})
    assert evidence_following.list_after(units_of(0, longer)[0], longer) == []


DOCS_ASSETS = evidence_under(
    "The API docs use **Swagger UI** and **ReDoc**, and each of those need some JavaScript and CSS files.\n\n"
    "By default, those files are served from a CDN.",
    "en/docs/how-to/custom-docs-ui-assets.md",
    ["Custom Docs UI Static Assets (Self-Hosting)"],
    start=3,
)
SELF_HOSTING = evidence_under(
    "## Self-hosting JavaScript and CSS for docs { #self-hosting-javascript-and-css-for-docs }\n\n"
    "Self-hosting the JavaScript and CSS could be useful if, for example, you need your app to keep working even "
    "while offline, without open Internet access, or in a local network.\n\n"
    "Here you'll see how to serve those files yourself, in the same FastAPI app, and configure the docs to use them.",
    "en/docs/how-to/custom-docs-ui-assets.md",
    ["Custom Docs UI Static Assets (Self-Hosting)"],
    start=59,
)


def test_when_a_thing_is_useful_is_why_one_would_do_it(monkeypatch):
    """dev68 c6807 "Why would I self-host the JavaScript and CSS files of the docs?" quoted what the files are;
    the control reads "could be useful if …" as no reason again."""
    question = "Why would I self-host the JavaScript and CSS files of the docs?"
    assert quoted_text(question, [DOCS_ASSETS, SELF_HOSTING]).startswith("Self-hosting the JavaScript and CSS")
    monkeypatch.setattr(reasons, "_USEFUL_WHEN", re.compile(r"(?!)"))
    assert not quoted_text(question, [DOCS_ASSETS, SELF_HOSTING]).startswith("Self-hosting")


def test_useful_reads_as_a_reason_only_with_its_condition():
    assert reasons.gives_cause("This would be useful for example to properly handle redirects.")
    assert reasons.gives_cause("如果你需要在离线时应用仍能工作，那么自托管 JavaScript 和 CSS 会很有用。")
    assert not reasons.gives_cause("The tutorial shows some useful tools.")


FORWARDED = evidence_under(
    "You can start FastAPI CLI with the *CLI Option* `--forwarded-allow-ips` and pass the IP addresses that should "
    "be trusted to read those forwarded headers.\n\n"
    'If you set it to `--forwarded-allow-ips="*"` it would trust all the incoming IPs.',
    "en/docs/advanced/behind-a-proxy.md",
    ["Behind a Proxy", "Proxy Forwarded Headers", "Enable Proxy Forwarded Headers"],
    start=27,
)
PLACEHOLDER = evidence_under(
    "* If you have advanced custom logic to access each route's `route.response_class`: the default value for "
    "`response_class` in `APIRoute` is now a `DefaultPlaceholder` used internally to handle and solve default "
    "values and overrides.",
    "en/docs/release-notes.md",
    ["Release Notes", "0.62.0 (2020-11-29)", "Breaking Changes"],
    start=6233,
)


def test_a_bare_command_line_option_is_code_the_answer_must_speak_of(monkeypatch):
    """dev68 u6802 "What is the default value of --forwarded-allow-ips …?" was answered with a release note on
    another default value; the control reads the option as no code name again."""
    question = "What is the default value of --forwarded-allow-ips when it is not given?"
    assert code_names(question, key_terms(question)) == {"forwarded-allow-ips"}
    assert quoted_text(question, [FORWARDED, PLACEHOLDER]) == ""
    without_options = re.compile(name_kinds._NAME.pattern.rsplit("|(?<![", 1)[0])
    monkeypatch.setattr(name_kinds, "_NAME", without_options)
    assert "DefaultPlaceholder" in quoted_text(question, [FORWARDED, PLACEHOLDER])


def test_markdown_rules_and_dashes_are_no_options():
    assert name_kinds.names("--- and -- then `x` and --workers 4") == {"x", "--workers"}


SMALL_ERRORS = evidence_under(
    "When building web APIs with FastAPI, if there's an error in our code, FastAPI will normally contain it to the "
    "single request that triggered the error. 🛡\n\n"
    "The client will get a **500 Internal Server Error** for that request, but the application will continue "
    "working for the next requests instead of just crashing completely.",
    "en/docs/deployment/concepts.md",
    ["Deployments Concepts", "Restarts", "Small Errors Automatically Handled"],
    start=140,
)


def test_a_line_giving_a_status_code_says_status_code(monkeypatch):
    """dev68 t6806: "… get a **500 Internal Server Error** …" states the status code without the words; the
    control asks the line to write them again."""
    question = "Which status code does a client receive when my code fails on its request?"
    assert "500 Internal Server Error" in quoted_text(question, [SMALL_ERRORS])
    monkeypatch.setattr(answer_types, "STATUS", -1)
    assert quoted_text(question, [SMALL_ERRORS]) == ""


def test_a_chinese_count_reads_past_bold_and_a_single(monkeypatch):
    """dev68 z6806 "启动应用之前的准备步骤通常应该由几个进程来执行？": "一个**单个进程**" counts one process (单个 is
    "a single"); the control leaves the bold between a number and the thing counted ("一个 **Uvicorn** 进程")."""
    question = "启动应用之前的准备步骤通常应该由几个进程来执行？"
    types = answer_types.asked_types(question)
    line = "因此，在启动应用程序之前，你将需要一个**单个进程**来执行这些**前面的步骤**。"
    assert answer_types.states_each(types, line, question)
    assert answer_types.states_each(types, "在启动之前，需要单个进程来执行这些步骤。", question)
    assert not answer_types.states_each(types, "表单的进程会执行这些步骤。", question)
    bold = "在启动之前，只运行一个 **Uvicorn** 进程来执行这些步骤。"
    assert answer_types.states_each(types, bold, question)
    monkeypatch.setattr(answer_types, "_EMPHASIS", re.compile(r"(?!)"))
    assert not answer_types.states_each(types, bold, question)


@pytest.mark.parametrize(
    ("question", "glue"),
    [
        ("只想在部分测试里替换依赖项时，应该在什么时候设置和撤销覆盖？", "时候"),  # dev64 z6405, refused before
        ("拿不准该用 async def 还是 def 的时候，应该选哪个？", "还是"),  # dev65 z6502, refused before
    ],
)
def test_chinese_when_and_or_are_no_key_terms(question, glue):
    """ "…的时候" is English "when" and "A 还是 B" its "or" (both stop words in English): as key terms they had to be
    written beside every other term, and the question was refused for its own wording (撤销, 拿不准)."""
    assert glue not in key_terms(question)
