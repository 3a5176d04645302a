"""A question about something the knowledge base never writes is refused without a model call, judged over what
the caller may read (a restricted page must not decide what an outsider is told)."""

from __future__ import annotations

import pytest

from conftest import write
from kb_agent.agent import synthesize, vocabulary
from kb_agent.agent.vocabulary import unknown_terms
from kb_agent.governance.identity import UserContext
from kb_agent.llm.scripted import ScriptedLLM
from test_agent_graph import ByRole, route
from test_answers import _indexed

UPLOADS = (
    "# Uploads\n\nUploadFile keeps a file in memory up to a maximum size limit; after passing this limit the file "
    "is stored on disk.\n\nThe maximum size of a form field is set by the server.\n"
)
# "per request": a word some page writes, not the uploads page - so no one passage holds the question's other words
QUESTION = "What is the maximum file size in megabytes that UploadFile keeps in memory per request?"
REQUESTS = "# Requests\n\nA request holds headers and a body.\n"


def _held(*words: str):
    return lambda terms: {t for t in terms if t in words}


def test_a_term_no_chunk_holds_is_unknown_but_a_compound_of_held_pieces_is_not():
    held = _held("keep", "aliv", "检查", "默认", "路径", "maximum", "size", "max", "connect", "fastapi")
    assert unknown_terms({"maximum", "size", "megabyt"}, held) == {"megabyt"}
    assert unknown_terms({"keep-alive"}, held) == set()  # written "keep alive" in the text
    pages = ["部署时默认的路径需要检查。"]
    assert unknown_terms({"健康检查", "默认", "路径"}, held, evidence=pages) == {"健康检查"}  # 健康 is written nowhere
    # a code name is one name: max and connect being written does not make max_connections written
    assert unknown_terms({"max_connections"}, held, "What is max_connections?") == {"max_connections"}


@pytest.mark.parametrize("substring", [True, False], ids=["written", "control_tokens_only"])
def test_a_chinese_word_the_evidence_writes_inside_another_cut_is_not_unknown(monkeypatch, substring):
    """dev13 z1305 "…调用函数可以不传它吗？" was refused ("no passage mentions 不传") over the line "你不能不传这个
    参数就调用函数", which jieba cuts differently: the characters are written, in another word."""
    import kb_agent.agent.vocabulary as vocab

    if not substring:
        monkeypatch.setattr(vocab, "has_cjk", lambda text: False)  # the substring test is for Chinese words only
    pages = ["参数 `name` 并不是可选的，你不能不传这个参数就调用函数。"]
    held = _held("参数", "调用", "函数")
    assert (unknown_terms({"不传", "参数", "调用", "函数"}, held, evidence=pages) == set()) is substring


def test_chinese_words_over_english_pages_are_the_other_language_not_unknown():
    english, chinese = ["UploadFile keeps a file in memory."], ["UploadFile 会保存在内存中。"]
    assert unknown_terms({"上传", "文件", "uploadfile"}, _held("uploadfile"), evidence=english) == set()
    assert unknown_terms({"上传", "文件", "uploadfile"}, _held("uploadfile"), evidence=chinese) == {"上传", "文件"}
    assert unknown_terms({"megabyt", "上传"}, _held("上传"), evidence=english) == {"megabyt"}


def test_a_few_hundred_passages_judge_only_code_names_and_a_misspelt_word_is_known():
    held = _held("report", "item")
    assert unknown_terms({"report", "miss"}, held, chunks=40) == set()  # "missing" unwritten: says little here
    assert unknown_terms({"max_connections", "miss"}, held, "max_connections?", chunks=40) == {"max_connections"}
    assert unknown_terms({"report", "miss"}, held, chunks=5000) == {"miss"}
    pages = ["The team is sponsored by a brewery."]
    assert unknown_terms({"team", "sponser"}, _held("team"), "Who sponsered the team?", pages) == set()


@pytest.fixture
def rich(monkeypatch):
    """The test pages stand for a knowledge base whose vocabulary is rich enough to judge plain words by."""
    monkeypatch.setattr(vocabulary, "RICH_VOCABULARY", 1)


def test_a_question_about_what_no_page_writes_is_refused_without_a_model_call(settings, tmp_path, monkeypatch, rich):
    write(tmp_path / "docs" / "uploads.md", UPLOADS)
    write(tmp_path / "docs" / "requests.md", REQUESTS)
    script = ByRole(route=route(), synth="UploadFile keeps up to 1 megabyte in memory [1].")
    with _indexed(settings, tmp_path / "docs", llm=ScriptedLLM(script)) as engine:
        answer = engine.answer_query(QUESTION)
        assert answer.refused and "synth" not in script.roles and answer.citations == []
        assert any("megabyt" in n for n in answer.notices)
        monkeypatch.setattr(synthesize, "unknown_terms", lambda *args: set())  # control: the rule off
        # the question also asks for a size no line states: that rule refuses it next, for its own reason
        assert not any("megabyt" in n for n in engine.answer_query(QUESTION).notices)
        monkeypatch.setattr(synthesize, "value_missing", lambda *args: None)
        engine.answer_query(QUESTION)
        assert "synth" in script.roles  # the page's other words "cover" the question: the model was asked


@pytest.fixture
def restricted_docs(tmp_path):
    write(tmp_path / "docs" / "uploads.md", UPLOADS)
    write(tmp_path / "docs" / "requests.md", REQUESTS)
    write(tmp_path / "docs" / "ops" / ".kbacl", "ops\n")
    write(tmp_path / "docs" / "ops" / "limits.md", "# Limits\nOur proxy caps uploads at 50 megabytes.\n")
    return tmp_path / "docs"


def test_what_a_restricted_page_writes_does_not_change_what_an_outsider_is_told(
    settings, restricted_docs, monkeypatch, rich
):
    outsider, member = UserContext(user_id="eve", groups=["eng"]), UserContext(user_id="olga", groups=["ops"])
    with _indexed(settings.model_copy(update={"llm_provider": "none"}), restricted_docs) as engine:
        seen = engine.answer_query(QUESTION, user=outsider)
        assert seen.refused and any("megabyt" in n for n in seen.notices)  # as if the page did not exist
        assert not any("megabyt" in n for n in engine.answer_query(QUESTION, user=member).notices)
        # control: the vocabulary read past the caller's ACL - the restricted page's word would make the
        # outsider's question answerable from the public page, telling them some page writes "megabytes"
        lexical = type(engine.kb().lexical)
        unscoped = lexical.held_terms
        monkeypatch.setattr(
            lexical, "held_terms", lambda self, terms, access: unscoped(self, terms, UserContext.local_owner().access())
        )
        assert not any("megabyt" in n for n in engine.answer_query(QUESTION, user=outsider).notices)


SERVERS = "# Servers\n\n* Hypercorn: an ASGI server compatible with HTTP/2 and Trio.\n* Uvicorn: a fast ASGI server.\n"


@pytest.mark.parametrize("rule", [True, False], ids=["versioned_name", "control_pieces_only"])
def test_a_versioned_name_no_evidence_writes_is_unknown_though_its_pieces_are_written(monkeypatch, rule):
    """ "HTTP/3" is "http" and "3" to the index, both written everywhere: dev8's u801 ("How do I enable HTTP/3
    when running fastapi run?") was answered with lines about `fastapi dev`."""
    if not rule:
        monkeypatch.setattr(vocabulary, "versioned_names", lambda question: [])
    held = _held("http", "3", "2", "enabl", "server")
    asked = {"http", "enabl", "server"}
    assert ("HTTP/3" in unknown_terms(asked, held, "How do I enable HTTP/3 on the server?", [SERVERS])) is rule
    assert unknown_terms(asked, held, "Which server supports HTTP/2?", [SERVERS]) == set()  # written: known


@pytest.mark.parametrize("rule", [True, False], ids=["anchor", "control_no_anchor"])
def test_an_extractive_answer_about_a_versioned_name_quotes_only_lines_that_write_it(monkeypatch, rule):
    from kb_agent.agent import extractive
    from kb_agent.agent.extractive import extractive_sentences
    from kb_agent.tools.base import Evidence

    if not rule:
        monkeypatch.setattr(extractive, "versioned_names", lambda question: [])
    text = "# Servers\n\nHypercorn is an ASGI server that supports HTTP/2.\n\nUvicorn serves HTTP/1.1 and WebSockets.\n"
    page = Evidence(source="s.md", path="s.md", start_line=1, end_line=5, text=text.rstrip("\n"))
    quoted = [s.text for s in extractive_sentences("Which ASGI server supports HTTP/3 or WebSockets?", [page])]
    assert (quoted == []) is rule


@pytest.mark.parametrize("rule", [True, False], ids=["askers_word", "control_every_word_judged"])
def test_a_plain_word_no_page_writes_is_the_askers_when_one_passage_holds_the_rest(
    settings, tmp_path, monkeypatch, rich, rule
):
    """dev18 x1802 "Which parameter of HTTPException can carry a dict or a list?" and c1804 "Why is it risky to
    …?" were refused because no page writes "carry" or "risky". A plain word the pages never write, beside a
    passage holding every other key term, is the asker's wording, not a thing the documents lack; a name
    ("Kerberos") or a Chinese word stays unknown. Control: without it the question is refused for "carry"."""
    from kb_agent.agent import coverage

    if not rule:
        monkeypatch.setattr(coverage, "holds_the_rest", lambda *args: False)
    write(
        tmp_path / "docs" / "errors.md",
        "# Errors\n\nWhen raising an `HTTPException`, you can pass any value as the parameter `detail`: a `dict`, a "
        "`list`, etc.\n",
    )
    write(tmp_path / "docs" / "requests.md", REQUESTS)
    with _indexed(settings.model_copy(update={"llm_provider": "none"}), tmp_path / "docs") as engine:
        answer = engine.answer_query("Which parameter of HTTPException can carry a dict or a list?")
        assert (not answer.refused and "`detail`" in answer.answer) is rule
        assert any("carri" in n for n in answer.notices) is not rule
        named = engine.answer_query("Which parameter of HTTPException can carry a dict for Kerberos?")
        assert named.refused and any("kerbero" in n for n in named.notices)
    assert coverage.holds_the_rest("Which parameter of HTTPException can carry a dict?", {"carri"}, []) is False
