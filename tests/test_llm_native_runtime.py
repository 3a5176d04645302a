"""The native runtime (llama.cpp compiled for this CPU): what it sends llama-cpp-python, how it reads replies and
failures, and when `auto` picks it. A stand-in `llama_cpp` module records the calls; the real one is only
installed by `scripts/setup.sh --native-llm` (docs/benchmarks.md measures it)."""

from __future__ import annotations

import sys
import types
from typing import ClassVar

import pytest

from kb_agent.config import Settings
from kb_agent.llm import factory
from kb_agent.llm.base import LLMError
from kb_agent.llm.local_backend import Sampling
from kb_agent.llm.native_backend import NativeLlamaChat


class FakeLlama:
    made: ClassVar[list[FakeLlama]] = []

    def __init__(self, **kwargs):
        self.kwargs, self.requests = kwargs, []
        # as llama-cpp-python does: the model parameters come from the library's defaults
        self.extra_buffers = sys.modules["llama_cpp"].llama_cpp.llama_model_default_params().use_extra_bufts
        FakeLlama.made.append(self)

    def create_chat_completion(self, **request):
        self.requests.append(request)
        if request["messages"][-1]["content"] == "too long":
            raise ValueError("Requested tokens (9000) exceed context window of 8192")
        if request["stream"]:
            return iter([{"choices": [{"delta": {"role": "assistant"}}]}, *_pieces("Hello", " there")])
        return {
            "choices": [{"message": {"content": '{"yes": true}'}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 4},
        }


def _pieces(*texts):
    return [{"choices": [{"delta": {"content": t}}]} for t in texts]


@pytest.fixture
def fake_llama_cpp(monkeypatch):
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama
    module.llama_cpp = types.SimpleNamespace(
        llama_model_default_params=lambda: types.SimpleNamespace(use_extra_bufts=True)
    )
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    FakeLlama.made.clear()
    return module


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_requests_carry_the_options_and_replies_are_read(fake_llama_cpp, model_file):
    chat = NativeLlamaChat(model_file, threads=2, n_ctx=4096, sampling=Sampling(max_tokens=100))
    llama = FakeLlama.made[0]
    assert llama.kwargs["n_threads"] == 2 and llama.kwargs["n_ctx"] == 4096
    # loaded without the weight repacking (slower here, and its AMX path crashes); the defaults are restored
    assert llama.extra_buffers is False
    assert fake_llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True
    schema = {"type": "object", "properties": {"yes": {"type": "boolean"}}}
    text = chat.chat([{"role": "user", "content": "q"}], json_schema=schema, stop=["\n\n"], max_tokens=20)
    assert text == '{"yes": true}'
    sent = llama.requests[-1]
    assert sent["response_format"] == {"type": "json_object", "schema": schema}
    assert sent["stop"] == ["\n\n"] and sent["max_tokens"] == 20 and sent["stream"] is False
    assert chat.usage()["prompt_tokens"] == 12


def test_stream_yields_the_text_pieces_and_releases_the_context(fake_llama_cpp, model_file):
    chat = NativeLlamaChat(model_file, threads=1)
    assert list(chat.stream([{"role": "user", "content": "hi"}])) == ["Hello", " there"]
    assert not chat._lock.locked()
    stream = chat.stream([{"role": "user", "content": "hi"}])
    next(stream)
    stream.close()  # the reader stopped early (a removed sentence, a cancelled request)
    assert not chat._lock.locked()


def test_failures_are_llm_errors_not_crashes(fake_llama_cpp, model_file, tmp_path):
    chat = NativeLlamaChat(model_file, threads=1)
    with pytest.raises(LLMError, match="context window"):
        chat._complete([{"role": "user", "content": "too long"}])
    with pytest.raises(LLMError, match="models install"):
        NativeLlamaChat(tmp_path / "missing.gguf", threads=1)


def test_without_llama_cpp_the_error_says_how_to_get_it(monkeypatch, model_file):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails
    with pytest.raises(LLMError, match="--native-llm"):
        NativeLlamaChat(model_file, threads=1)


@pytest.mark.parametrize(
    ("runtime", "installed", "expected"),
    [("auto", True, "NativeLlamaChat"), ("auto", False, "LocalLlamaChat"), ("xllamacpp", True, "LocalLlamaChat")],
)
def test_auto_picks_the_native_build_when_it_is_installed(
    monkeypatch, tmp_path, model_file, runtime, installed, expected
):
    built: list[str] = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def __call__(self, path, **kwargs):
            built.append(self.name)
            return object()

    monkeypatch.setattr("kb_agent.llm.native_backend.available", lambda: installed)
    monkeypatch.setattr("kb_agent.llm.native_backend.NativeLlamaChat", Recorder("NativeLlamaChat"))
    monkeypatch.setattr("kb_agent.llm.local_backend.LocalLlamaChat", Recorder("LocalLlamaChat"))
    monkeypatch.setattr(factory, "_local_cache", {})
    settings = Settings(
        data_folder=tmp_path, local_model_path=model_file, local_runtime=runtime, llm_threads=1, _env_file=None
    )
    factory._local(settings)
    assert built == [expected]


@pytest.mark.parametrize(("seed", "sent"), [(0, 0), (7, 7), (-1, None)])
def test_the_configured_seed_reaches_every_request(monkeypatch, tmp_path, fake_llama_cpp, model_file, seed, sent):
    """A fixed seed makes a rerun give the same answers (the answer sets compare runs); -1 draws a new one."""
    monkeypatch.setattr("kb_agent.llm.native_backend.available", lambda: True)
    monkeypatch.setattr(factory, "_local_cache", {})
    settings = Settings(data_folder=tmp_path, local_model_path=model_file, llm_threads=1, llm_seed=seed, _env_file=None)
    chat = factory._local(settings)
    chat.chat([{"role": "user", "content": "q"}])
    list(chat.stream([{"role": "user", "content": "q"}]))
    assert [r.get("seed") for r in FakeLlama.made[0].requests] == [sent, sent]
