from kb_agent.text.tokenize import tokenize


def test_identifiers_are_findable_whole_and_in_parts():
    tokens = tokenize("Set KB_AGENT_MAX_ITERATIONS to 3")
    assert "kb_agent_max_iterations" in tokens
    assert {"kb", "agent", "max", "iter"} <= set(tokens)


def test_snake_and_camel_case_split():
    assert {"snake_case", "snake", "case"} <= set(tokenize("snake_case"))
    assert {"vectortool", "vector", "tool"} <= set(tokenize("VectorTool"))
    assert {"httpserver", "http", "server"} <= set(tokenize("HTTPServer"))


def test_ticket_keys_whole_and_parts():
    for key, project, number in (("LANG-1234", "lang", "1234"), ("PROJ-123", "proj", "123")):
        tokens = tokenize(f"what changed in {key}?")
        assert key.lower() in tokens
        assert project in tokens and number in tokens


def test_english_is_lowercased_stemmed_and_stopped():
    tokens = tokenize("The Runners were RUNNING quickly")
    assert "the" not in tokens
    assert "run" in tokens and "runner" in tokens


def test_chinese_is_segmented_with_jieba_search_mode():
    tokens = tokenize("中华人民共和国的首都是北京")
    assert "北京" in tokens and "首都" in tokens
    assert "共和国" in tokens and "中华人民共和国" in tokens  # word and its sub-words
    assert "的" not in tokens


def test_mixed_chinese_english():
    tokens = tokenize("使用FastAPI声明请求体")
    assert "fastapi" in tokens and "请求" in tokens


def test_query_and_document_analysis_agree():
    doc = tokenize("Configure the retry_policy for LANG-77")
    for query in ("retry_policy", "retry policy", "lang-77", "LANG 77"):
        assert set(tokenize(query)) & set(doc)
