"""The embedded default model, for real: loaded in-process from the verified GGUF (`kb-agent models install`)."""

import pytest
from pydantic import BaseModel

from conftest import HashEmbedder, write
from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.llm.model_install import is_installed, model_path

pytestmark = pytest.mark.slow
MODELS = Settings().models_folder  # the real data folder: `.ci/run` installs the model there
needs_model = pytest.mark.skipif(not is_installed(MODELS), reason="run `kb-agent models install` first")


@pytest.fixture(scope="module")
def local_llm():
    from kb_agent.llm.local_backend import LocalLlamaChat

    return LocalLlamaChat(model_path(MODELS), threads=2, n_ctx=4096)


class Route(BaseModel):
    query_type: str
    complexity: str


@needs_model
def test_chat_structured_and_stream(local_llm):
    assert local_llm.chat([{"role": "user", "content": "Reply with the single word: yes"}], max_tokens=5).strip()
    value, ok = local_llm.structured(
        [
            {
                "role": "system",
                "content": "Classify. JSON keys: query_type (exact|conceptual), complexity (simple|complex).",
            },
            {"role": "user", "content": "How does reciprocal rank fusion work?"},
        ],
        Route,
        fallback=Route(query_type="x", complexity="x"),
        max_tokens=60,
    )
    assert ok and value.query_type in ("exact", "conceptual")
    pieces = list(local_llm.stream([{"role": "user", "content": "Count from 1 to 3."}], max_tokens=12))
    assert len(pieces) > 1
    assert local_llm.usage()["calls"] == 3


@needs_model
def test_answer_with_the_local_model_is_cited(tmp_path):
    root = tmp_path / "docs"
    write(root / "retry.md", "# Retries\nThe agent stops after KB_AGENT_MAX_ITERATIONS rounds; the default is 3.\n")
    write(root / "tea.md", "# Tea\nGreen tea is brewed at eighty degrees for two minutes.\n")
    settings = Settings(
        data_folder=tmp_path / "data",
        local_model_path=model_path(MODELS),
        llm_threads=2,
        llm_context=4096,
        _env_file=None,
    )
    engine = Engine(settings, embedder=HashEmbedder())
    engine.index([root])
    answer = engine.answer_query("How long is green tea brewed?")
    assert not answer.refused and answer.citations and answer.citations[0].path == "docs/tea.md"
    assert answer.llm_calls <= 2


@needs_model
def test_native_runtime_chat_structured_and_stream():
    """The same calls on llama.cpp compiled for this CPU, where `scripts/setup.sh --native-llm` installed it."""
    from kb_agent.llm import native_backend

    if not native_backend.available():
        pytest.skip("llama-cpp-python is not installed (bash scripts/setup.sh --native-llm)")
    llm = native_backend.NativeLlamaChat(model_path(MODELS), threads=2, n_ctx=4096)
    assert llm.chat([{"role": "user", "content": "Reply with the single word: yes"}], max_tokens=5).strip()
    system = "Classify. JSON keys: query_type (exact|conceptual), complexity (simple|complex)."
    value, ok = llm.structured(
        [{"role": "system", "content": system}, {"role": "user", "content": "How does reciprocal rank fusion work?"}],
        Route,
        fallback=Route(query_type="x", complexity="x"),
        max_tokens=60,
    )
    assert ok and value.query_type in ("exact", "conceptual")
    assert len(list(llm.stream([{"role": "user", "content": "Count from 1 to 3."}], max_tokens=12))) > 1
