"""The misses of stop 60's second held-out set (`fastapi_docs_dev54.jsonl`) that the answer step owns."""

from __future__ import annotations

from conftest import evidence_under, rare_weights
from kb_agent.agent import answer_types, extractive, reasons

MIGRATE_ZH = evidence_under(
    "FastAPI 0.126.0 移除了对 Pydantic v1 的支持，但在一段时间内仍支持 `pydantic.v1`。\n\n"
    "FastAPI 0.100.0 同时支持 Pydantic v1 和 v2，会使用你已安装的任一版本。",
    "zh/docs/how-to/migrate-from-pydantic-v1-to-pydantic-v2.md",
    ["从 Pydantic v1 迁移到 Pydantic v2"],
    start=9,
)


def test_asked_which_version_gave_something_up_the_line_with_the_version_and_the_end_answers(monkeypatch):
    """x5402 "哪个版本放弃了对 Pydantic v1 的支持？": 放弃 ("gave up") asked no end, and 版本 was a word the
    answering line "FastAPI 0.126.0 移除了对 Pydantic v1 的支持" had to write."""
    question = "哪个版本放弃了对 Pydantic v1 的支持？"
    assert 3 in answer_types.asked_types(question)
    weights = rare_weights({"版本": 3.0, "pydant": 4.0, "v1": 4.0})
    top = extractive.rank(question, [MIGRATE_ZH], weights=weights)[0]
    assert "0.126.0" in top.text and top.own > 0.6
    monkeypatch.setattr(answer_types, "VERSION_WORD_ZH", "\0")  # control: 版本 a word the line must write
    assert extractive.rank(question, [MIGRATE_ZH], weights=weights)[0].own < top.own


def test_now_that_gives_a_cause():
    """x5401: "But now that FastAPI is the backend framework with the most GitHub stars …, it no longer makes sense"."""
    assert reasons.gives_cause("But now that FastAPI is the most starred framework, it no longer makes sense.")
    assert not reasons.gives_cause("Before, this page used to list links to external articles.")
    # dev18 c1802: "This way, if any part of Starlette's internal code … raises …, your handler will be able to …"
    assert reasons.gives_cause("This way, if any part of Starlette's code raises it, your handler will catch it.")


SETTINGS = evidence_under(
    "Here we define the config `env_file` inside of your Pydantic `Settings` class, and set the value to the filename "
    "with the dotenv file we want to use.",
    "en/docs/advanced/settings.md",
    ["Settings and Environment Variables", "Reading a .env file"],
    start=228,
    title="Settings and Environment Variables",
)
HASHING = evidence_under(
    "Create a PasswordHash instance with recommended settings - it will be used for hashing and verifying "
    "passwords.\n\n"
    "pwdlib also supports the bcrypt hashing algorithm but does not include legacy algorithms - for working with "
    "outdated hashes, it is recommended to use the passlib library.",
    "en/docs/tutorial/security/oauth2-jwt.md",
    ["OAuth2 with Password (and hashing), Bearer with JWT tokens", "Hash and verify the passwords"],
    start=101,
    title="OAuth2 with Password (and hashing), Bearer with JWT tokens",
)


def test_asked_what_a_named_page_says_a_line_of_another_page_is_no_answer(monkeypatch):
    """u5401 "Which algorithm does the settings page recommend for encrypting the .env file?" (it recommends none)
    was answered with the OAuth2 page's hashing algorithm."""
    from kb_agent.agent import question_terms

    question = "Which algorithm does the settings page recommend for encrypting the .env file?"
    assert question_terms.page_named("What does the path parameters tutorial use?") == {"path", "paramet"}
    weights = rare_weights({"algorithm": 5.7, "recommend": 4.1, "set": 2.5})  # (the rest common: 2.0)
    assert not any("bcrypt" in u.text for u in extractive.rank(question, [SETTINGS, HASHING], weights=weights))
    monkeypatch.setattr(extractive, "page_named", lambda question: set())  # control
    assert any("bcrypt" in u.text for u in extractive.rank(question, [SETTINGS, HASHING], weights=weights))
