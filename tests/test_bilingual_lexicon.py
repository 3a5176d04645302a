"""The Chinese -> English lexicon learned from a knowledge base's translated pages, and the search it opens: a
Chinese question reaching an English page no one translated."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import write
from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter
from kb_agent.retrieval.translated import TRANSLATED_SHARE
from kb_agent.store.bilingual import Lexicon, learn, translation_pairs

EN = {
    "repo.md": "# The repository\nThe repository holds the source code.\nClone the repository before you start.\n"
    "Every change to the repository is reviewed.\n",
    "owners.md": "# Owners\nThe owner approves each release.\nAsk the owner when a release is late.\n"
    "An owner may hand the role on.\n",
    "tests.md": "# Tests\nRun the tests before each release.\nThe tests live beside the code.\n",
}
ZH = {
    "repo.md": "# 仓库\n仓库保存源代码。\n开始之前先克隆仓库。\n对仓库的每一次改动都会被审查。\n",
    "owners.md": "# 所有者\n所有者批准每一次发布。\n发布延迟时询问所有者。\n所有者可以把这个角色交给别人。\n",
    "tests.md": "# 测试\n每次发布之前运行测试。\n测试放在代码旁边。\n",
}
# answered only here, in English, and with no Chinese translation
UNTRANSLATED = "# Management\nAlice Zhang is the owner of the repository and signs every release.\n"
# Chinese pages that share the question's words and do not answer it
DISTRACTORS = {
    f"zh/docs/notes{i}.md": f"# 笔记 {i}\n仓库的目录结构第 {i} 部分。\n谁负责这个仓库的构建脚本？第 {i} 个说明。\n"
    for i in range(6)
}
QUESTION = "仓库的所有者是谁？"


def _corpus(root: Path, *, restricted_pair: bool = False) -> Path:
    for name, text in EN.items():
        write(root / "en" / "docs" / name, text)
    for name, text in ZH.items():
        write(root / "zh" / "docs" / name, text)
    write(root / "en" / "docs" / "management.md", UNTRANSLATED)
    for path, text in DISTRACTORS.items():
        write(root / path, text)
    if restricted_pair:  # a page pair only hr may read: 合并 <-> merger on every line
        for lang, lines in (("en", ["# Merger", "The merger closes in March.", "The merger stays secret."]),
                            ("zh", ["# 合并", "合并在三月完成。", "合并保持机密。"])):  # fmt: skip
            write(root / lang / "docs" / "hr" / ".kbacl", "hr\n")
            write(root / lang / "docs" / "hr" / "merger.md", "\n".join(lines) + "\n")
    return root


def _paths(response) -> list[str]:
    return [h.path for h in response.hits]


def test_pairs_are_paths_that_differ_in_one_language_segment():
    paths = ["en/docs/a.md", "zh/docs/a.md", "en/docs/b.md", "docs/zh-cn/c.md", "docs/en/c.md", "zhang/a.md"]
    assert translation_pairs(paths) == [("docs/zh-cn/c.md", "docs/en/c.md"), ("zh/docs/a.md", "en/docs/a.md")]


def test_aligned_lines_teach_the_words_they_share():
    zh = ["仓库保存源代码。", "克隆仓库。", "测试放在代码旁边。"]
    en = ["The repository holds the source code.", "Clone the repository.", "The tests live beside the code."]
    aligned = list(zip(zh, en, strict=True))
    lexicon = learn(aligned, generation=3)
    assert lexicon.words["仓库"][0] == "repositori"
    assert "code" in lexicon.words["代码"]
    terms, translated = lexicon.english_terms("仓库在哪里？")
    assert translated == 1 and terms[0] == "repositori"


def test_a_damaged_stored_lexicon_is_not_trusted():
    assert Lexicon.from_meta('{"generation": 1, "words": 5}') is None
    assert Lexicon.from_meta("not json") is None
    again = Lexicon.from_meta(Lexicon(4, 2, {"仓库": ["repositori"]}, {"zh/a.md"}).as_meta())
    assert again is not None and again.words == {"仓库": ["repositori"]} and again.paired == {"zh/a.md"}


def test_a_chinese_question_reaches_the_untranslated_english_page(engine, tmp_path):
    engine.index([_corpus(tmp_path / "kb")])
    engine.embed()
    lexicon = engine.kb().bilingual_lexicon()
    assert lexicon is not None and "owner" in lexicon.words["所有者"]
    assert "kb/en/docs/repo.md" in lexicon.paired and "kb/en/docs/management.md" not in lexicon.paired
    found = _paths(engine.searcher().search(QUESTION, access=AccessFilter.unrestricted(), k=3, beyond=2))
    assert "kb/en/docs/management.md" in found[3:5]  # next after the top 3, which the Chinese pages keep


def test_control_without_the_translated_search_the_english_page_is_out_of_reach(settings, embedder, tmp_path):
    off = Engine(settings.model_copy(update={"rrf_weight_translated": 0.0}), embedder=embedder)
    try:
        off.index([_corpus(tmp_path / "kb")])
        off.embed()
        found = _paths(off.searcher().search(QUESTION, access=AccessFilter.unrestricted(), k=3, beyond=2))
        assert "kb/en/docs/management.md" not in found
    finally:
        off.close()


def test_restricted_pages_do_not_teach_the_shared_lexicon(engine, tmp_path):
    engine.index([_corpus(tmp_path / "kb", restricted_pair=True)])
    lexicon = engine.kb().bilingual_lexicon()
    assert lexicon is not None and "合并" not in lexicon.words
    assert not any("hr/" in p for p in lexicon.paired)


def test_control_the_same_pair_public_is_learned(engine, tmp_path):
    root = _corpus(tmp_path / "kb", restricted_pair=True)
    for lang in ("en", "zh"):
        (root / lang / "docs" / "hr" / ".kbacl").unlink()
    engine.index([root])
    lexicon = engine.kb().bilingual_lexicon()
    assert lexicon is not None and "merger" in lexicon.words["合并"]


def test_the_lexicon_is_relearned_when_the_pages_change(engine, tmp_path):
    root = _corpus(tmp_path / "kb")
    engine.index([root])
    assert "发布" in engine.kb().bilingual_lexicon().words
    (root / "zh" / "docs" / "owners.md").unlink()
    (root / "zh" / "docs" / "tests.md").unlink()
    engine.index([root])
    lexicon = engine.kb().bilingual_lexicon()
    assert "发布" not in lexicon.words and "kb/en/docs/owners.md" not in lexicon.paired


def test_settings_default_keeps_the_translated_search_on():
    assert Settings(_env_file=None).rrf_weight_translated > 0


def test_a_query_read_for_one_word_in_four_is_not_searched_in_english():
    """u2203 "FastAPI 内置的限流中间件叫什么名字？" read as "middleware" alone found the middleware reference."""
    lexicon = Lexicon(words={"中间件": ["middlewar"], "仓库": ["repositori"], "所有者": ["owner"]})
    assert lexicon.translated_share("FastAPI 内置的限流中间件叫什么名字？") < TRANSLATED_SHARE
    assert lexicon.translated_share("仓库的所有者是谁？") == 1.0


def _translated_paths(engine, query: str) -> list[str]:
    from kb_agent.retrieval.translated import Lexicons

    kb = engine.kb()
    lists = Lexicons().lists([kb], query, 20, AccessFilter.unrestricted(), 1.0, {})
    ids = [key[1] for _, _, found in lists for key, _ in found]
    stored = kb.catalog.get_chunks(ids)
    return [stored[i].chunk.path for i in ids]


def test_a_question_that_writes_a_name_searches_only_the_pages_that_write_it(engine, tmp_path, monkeypatch):
    """x1501 "如果我来自 Flask，APIRouter 相当于什么？": read for its common words alone, the translated search
    added release notes that outranked the answer; x5105 "在 WebSocket 中可以抛出哪个异常…": skipped whenever a
    name was written, the untranslated page saying it was out of reach."""
    from kb_agent.retrieval import translated

    root = _corpus(tmp_path / "kb")
    write(root / "en" / "docs" / "signing.md", "# Signing\nThe owner signs each release with GPG.\n")
    engine.index([root])
    question = "所有者用 GPG 发布什么？"
    assert translated.rare_names(engine.kb(), question) == {"gpg"}
    assert _translated_paths(engine, question) == ["kb/en/docs/signing.md"]
    # control: every page the translated words reach, the one that never says GPG among them
    monkeypatch.setattr(translated, "rare_names", lambda kb, query: set())
    assert "kb/en/docs/management.md" in _translated_paths(engine, question)


def test_status_says_what_the_lexicon_learned_from(engine, tmp_path):
    engine.index([_corpus(tmp_path / "kb")])
    row = engine.status()[0].as_dict()
    assert row["translated_pages"] == 3 and row["lexicon_words"] > 0


def _management(glossary: dict[str, list[str]]):
    from conftest import evidence_under

    passage = evidence_under(UNTRANSLATED, "en/docs/management.md")
    return passage.model_copy(update={"glossary": glossary})


def test_an_english_passage_is_read_for_a_chinese_questions_words():
    """x4938: "FastAPI 仓库的所有者是谁？" - the management page holds "repository" and "owner", which the glossary
    says 仓库 and 所有者 are."""
    from kb_agent.agent import coverage, extractive

    passage = _management({"仓库": ["repositori"], "所有者": ["owner"]})
    assert coverage.strong_first_hop(QUESTION, [passage])
    assert "Alice Zhang" in extractive.rank(QUESTION, [passage])[0].text


def test_control_without_the_glossary_the_english_passage_says_nothing_of_it():
    from kb_agent.agent import coverage, extractive

    passage = _management({})
    assert not coverage.strong_first_hop(QUESTION, [passage])
    assert not extractive.rank(QUESTION, [passage])


def test_a_name_a_chinese_page_writes_leaves_the_question_to_the_plain_search(engine, tmp_path, monkeypatch):
    """x3301 "Cookie 可以在依赖项中设置吗？": the Chinese pages write Cookie and answer; the reference pages the
    translated search seated pushed the answering one out of the passages read."""
    from kb_agent.retrieval import translated

    root = _corpus(tmp_path / "kb")
    write(root / "en" / "docs" / "signing.md", "# Signing\nThe owner signs each release with GPG.\n")
    write(root / "zh" / "docs" / "keys.md", "# 密钥\n所有者用 GPG 签名每一次发布。\n")
    engine.index([root])
    question = "所有者用 GPG 发布什么？"
    assert _translated_paths(engine, question) == []
    monkeypatch.setattr(translated, "_written_in_chinese", lambda kb, names, access: False)  # control
    assert "kb/en/docs/signing.md" in _translated_paths(engine, question)


def test_question_words_are_neither_learned_nor_searched(monkeypatch):
    """哪里 had learned "claud codex copilot" from one aligned line, and every 哪里 question searched for them."""
    from kb_agent.store import bilingual

    aligned = [("你可以在哪里使用 Claude、Codex 和 Copilot？", "Where can you use Claude, Codex and Copilot?")] * 3
    assert "哪里" not in learn(aligned, generation=1).words
    lexicon = Lexicon(words={"哪里": ["claud"], "链接": ["link"]})
    assert lexicon.english_terms("链接在哪里？") == (["link"], 1)
    monkeypatch.setattr(bilingual, "ZH_SKIP", set())  # control: 哪里 read as a word
    assert "哪里" in learn(aligned, generation=1).words and "claud" in lexicon.english_terms("链接在哪里？")[0]


def test_a_name_in_the_pages_title_is_a_name_the_passage_writes(engine, tmp_path, monkeypatch):
    """x5302 "FastAPI People 页面的数据以前多久计算一次？": "People" is the page's title; the section that answers
    never writes it, and the translated search kept only passages whose text did."""
    from kb_agent.retrieval import translated

    root = _corpus(tmp_path / "kb")
    intro = "".join(f"Line {i} of the introduction to keys and how they are kept.\n\n" for i in range(60))
    write(root / "en" / "docs" / "gpg.md", f"# GPG\n\n{intro}## Details\n\nThe owner signs each release.\n")
    engine.index([root])
    question = "所有者用 GPG 发布什么？"

    def owner_line_found() -> bool:
        kb = engine.kb()
        lists = translated.Lexicons().lists([kb], question, 20, AccessFilter.unrestricted(), 1.0, {})
        stored = kb.catalog.get_chunks([key[1] for _, _, found in lists for key, _ in found])
        return any("The owner signs" in s.chunk.text and "# GPG" not in s.chunk.text for s in stored.values())

    assert owner_line_found()
    monkeypatch.setattr(translated, "_written", lambda chunk: set(translated.tokenize(chunk.text)))  # control
    assert not owner_line_found()


def test_a_chinese_dates_month_is_no_name_an_english_page_writes(engine, tmp_path):
    """x5303 "截至 2026 年 7 月，…": the page says "As of July 2026", and 7 was a name it had to write."""
    from kb_agent.retrieval import translated

    engine.index([_corpus(tmp_path / "kb")])
    assert translated.rare_names(engine.kb(), "截至 2026 年 7 月，仓库的所有者是谁？") <= {"2026"}
    assert "7" in translated.rare_names(engine.kb(), "第 7 个仓库的所有者是谁？")


def test_asked_which_release_the_untranslated_change_log_is_searched(engine, tmp_path, monkeypatch):
    """x5304 "哪个版本开始可以通过 openapi_url=None 禁用文档界面？": a Chinese page writes openapi_url and tells how
    to use it; since when is only in the English release notes, which the gate kept out."""
    from kb_agent.retrieval import translated

    root = _corpus(tmp_path / "kb")
    write(root / "en" / "docs" / "signing.md", "# Signing\nSince 1.2.0 the owner signs each release with GPG.\n")
    write(root / "zh" / "docs" / "keys.md", "# 密钥\n所有者用 GPG 签名每一次发布。\n")
    engine.index([root])
    question = "哪个版本开始所有者用 GPG 签名发布？"
    assert "kb/en/docs/signing.md" in _translated_paths(engine, question)
    monkeypatch.setattr(translated, "_ASKS_RELEASE", re.compile(r"(?!)"))  # control: the gate holds
    assert _translated_paths(engine, question) == []


def test_the_dictionary_reads_the_words_the_lexicon_never_paired_in_the_untranslated_search(
    engine, tmp_path, monkeypatch
):
    """x5703 "从哪个版本开始，自定义中间件可以抛出 HTTPException 并让它传播？": 传播 (propagate) is on no translated
    page; the release note that answers says "propagate", a longer one says HTTPException more often."""
    from kb_agent.retrieval import translated

    root = _corpus(tmp_path / "kb")
    write(
        root / "en" / "docs" / "changes.md",
        "# Changes\n## 1.2.0\nAllow owners to raise `HTTPException`s and propagate them.\n",
    )
    write(
        root / "en" / "docs" / "errors.md",
        "# Errors\n" + "An `HTTPException` is raised; the `HTTPException` stops it.\n" * 3,
    )
    engine.index([root])
    question = "从哪个版本开始，所有者可以抛出 HTTPException 并让它传播？"
    assert "propag" in translated._dictionary_terms(question)
    assert _translated_paths(engine, question)[0] == "kb/en/docs/changes.md"
    learned = translated.Lexicons().of(engine.kb()).words
    assert "所有者" in learned and "owner" not in translated._dictionary_terms("所有者可以传播吗？", learned)
    # no release asked: the senses of the words the lexicon lacks only
    assert "propag" in translated._dictionary_terms("所有者可以传播吗？", learned)
    monkeypatch.setattr(translated, "_dictionary_terms", lambda query, learned=None: [])  # control: learned words alone
    assert _translated_paths(engine, question)[0] != "kb/en/docs/changes.md"
