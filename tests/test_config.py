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


def test_free_cores_follow_the_load(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr("os.getloadavg", lambda: (1.6, 0.0, 0.0))
    assert free_cores() == 2
    monkeypatch.setattr("os.getloadavg", lambda: (9.0, 0.0, 0.0))
    assert free_cores() == 1
