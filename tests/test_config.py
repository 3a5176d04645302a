from pathlib import Path

import pytest
from pydantic import ValidationError

from kb_agent.config import Settings, free_cores


def test_env_variables_are_read(monkeypatch, tmp_path):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(tmp_path / "x"))
    monkeypatch.setenv("KB_AGENT_CHUNK_MAX_CHARS", "900")
    monkeypatch.setenv("KB_AGENT_RRF_K", "30")
    settings = Settings(_env_file=None)
    assert settings.data_folder == tmp_path / "x" and settings.chunk_max_chars == 900 and settings.rrf_k == 30


def test_dotenv_file_is_read(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text("KB_AGENT_DEFAULT_KB=wiki\n")
    monkeypatch.chdir(tmp_path)
    assert Settings().default_kb == "wiki"


def test_home_is_expanded():
    assert Settings(data_folder=Path("~/kb"), _env_file=None).data_folder == Path.home() / "kb"


def test_invalid_values_are_rejected():
    with pytest.raises(ValidationError, match="OVERLAP"):
        Settings(chunk_max_chars=500, chunk_overlap_chars=600, _env_file=None)
    with pytest.raises(ValidationError):
        Settings(rrf_k=0, _env_file=None)


def test_free_cores_follow_the_load_of_the_last_moment_not_the_last_minute(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda _: {0, 1, 2, 3})
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr("os.getloadavg", lambda: (4.0, 0.0, 0.0))  # the minute before: busy
    samples = iter([(1000, 4000), (1012, 4100)])  # the last moment: half a core of 4 busy
    monkeypatch.setattr("kb_agent.config._cpu_times", lambda: next(samples))
    assert free_cores(sample_s=0) == 4
    samples = iter([(1000, 4000), (1075, 4100)])  # three of four cores busy
    assert free_cores(sample_s=0) == 1
    monkeypatch.setattr("kb_agent.config._cpu_times", lambda: None)  # no /proc: the load average
    monkeypatch.setattr("os.getloadavg", lambda: (1.6, 0.0, 0.0))
    assert free_cores(sample_s=0) == 2
    monkeypatch.setattr("os.getloadavg", lambda: (9.0, 0.0, 0.0))
    assert free_cores(sample_s=0) == 1


def test_thread_counts_are_decided_when_a_model_loads_not_when_settings_are_read():
    settings = Settings(_env_file=None)
    assert settings.llm_threads is None and settings.embed_threads is None
    assert Settings(llm_threads=3, _env_file=None).llm_threads == 3
