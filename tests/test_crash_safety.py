"""Killing the indexer leaves the previous index intact and searchable."""

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import write
from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.governance.access import AccessFilter

ALL = AccessFilter.unrestricted()


def _bm25_paths(settings, query):
    engine = Engine(settings)
    try:
        return [h.path for h in engine.search(query, access=ALL, mode="bm25", k=50).hits]
    finally:
        engine.close()


@pytest.mark.slow  # a real subprocess: seconds, not milliseconds (CI runs it)
def test_kill_9_mid_run_keeps_previous_index(tmp_path):
    settings = Settings(data_folder=tmp_path / "data", _env_file=None)
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nthe old walrus content\n")
    env = {**os.environ, "KB_AGENT_DATA_FOLDER": str(settings.data_folder)}
    cmd = [sys.executable, "-m", "kb_agent.interfaces.cli", "index", str(root), "--no-embed"]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    assert _bm25_paths(settings, "walrus") == ["docs/a.md"]

    write(root / "a.md", "# A\nthe new narwhal content\n")
    for i in range(3000):  # enough work that the run is still going when it is killed
        write(root / "bulk" / f"f{i:04d}.md", f"# Bulk {i}\n" + f"filler paragraph {i} seal\n" * 20)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.0)
    if proc.poll() is not None:
        pytest.fail("indexer finished before it could be killed; make the workload bigger")
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    assert _bm25_paths(settings, "walrus") == ["docs/a.md"]  # old content still there
    assert _bm25_paths(settings, "narwhal") == []  # nothing half-written is visible

    subprocess.run(cmd, env=env, check=True, capture_output=True)  # the next run completes normally
    assert _bm25_paths(settings, "narwhal") == ["docs/a.md"]
    assert _bm25_paths(settings, "walrus") == []


def test_death_between_lexical_and_catalog_commit_is_repaired(engine, tmp_path, monkeypatch):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nthe old walrus content\n")
    engine.index([root])
    kb = engine.kb()
    write(root / "a.md", "# A\nthe new narwhal content\n")

    def die(*_args):
        raise KeyboardInterrupt  # as if the process died right after tantivy committed

    monkeypatch.setattr(kb.catalog, "bump_generation", die)
    with pytest.raises(KeyboardInterrupt):
        engine.index([root])
    monkeypatch.undo()
    assert kb.catalog.get_meta("lexical_dirty") == "1"
    assert [s.chunk.text for s in kb.catalog.iter_chunks()] == ["# A\nthe old walrus content"]

    report = engine.index([root])  # the next writer rebuilds the lexical index from the catalog first
    assert report.updated == ["docs/a.md"]
    assert kb.catalog.get_meta("lexical_dirty") == "0"
    hits = engine.search("narwhal", access=ALL, mode="bm25").hits
    assert [h.path for h in hits] == ["docs/a.md"]
    assert engine.search("walrus", access=ALL, mode="bm25").hits == []
    assert kb.lexical.num_docs() == kb.catalog.count_chunks()


def test_ctrl_c_rolls_back_cleanly(engine, tmp_path, monkeypatch):
    root = tmp_path / "docs"
    write(root / "a.md", "# A\nalpha\n")
    engine.index([root])
    write(root / "b.md", "# B\nbeta\n")
    kb = engine.kb()
    original = kb.lexical.add

    def interrupted(rows):
        original(rows)
        raise KeyboardInterrupt

    monkeypatch.setattr(kb.lexical, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        engine.index([root])
    monkeypatch.undo()
    assert kb.catalog.get_meta("lexical_dirty") == "0"
    assert kb.catalog.count_files() == 1
    assert engine.search("beta", access=ALL, mode="bm25").hits == []


def test_second_writer_gets_a_clear_error(engine, tmp_path):
    import fcntl

    from kb_agent.store.base import KBError

    root = tmp_path / "docs"
    write(root / "a.md", "# A\nalpha\n")
    engine.index([root])
    with open(engine.kb().folder / ".write.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(KBError, match="another process"):
            engine.index([root])
