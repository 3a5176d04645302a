"""The audit trail cannot be quietly rewritten: every tampering kind is reported by `verify`, and no input
(a 100 KB question) breaks the chain."""

from __future__ import annotations

import hashlib
import json

import pytest

from kb_agent.governance.audit import AuditLog, _canonical

KEY = "audit-key-kept-in-a-secret-manager-0123"


@pytest.fixture
def log(tmp_path) -> AuditLog:
    audit = AuditLog(tmp_path / "audit" / "audit.jsonl", key=KEY)
    for i in range(6):
        audit.write("node", {"node": f"n{i}", "ms": i}, trace_id=f"t{i}")
    assert audit.verify().ok
    return audit


def _lines(log: AuditLog) -> list[str]:
    return log.path.read_text().splitlines()


def _save(log: AuditLog, lines: list[str]) -> None:
    log.path.write_text("".join(line + "\n" for line in lines))


def _resign_without_key(records: list[dict]) -> list[str]:
    """What an attacker without the key can do: recompute plain hashes and re-chain."""
    previous, out = "0" * 64, []
    for seq, record in enumerate(records, start=1):
        record = {**record, "seq": seq, "prev": previous}
        record["hash"] = hashlib.sha256(_canonical(record)).hexdigest()
        previous = record["hash"]
        out.append(json.dumps(record))
    return out


def _problems(log: AuditLog) -> str:
    report = log.verify()
    assert not report.ok
    return "\n".join(report.problems)


def test_an_edited_record(log):
    lines = _lines(log)
    record = json.loads(lines[2])
    record["node"] = "rewritten"
    _save(log, [*lines[:2], json.dumps(record), *lines[3:]])
    assert "line 3: content does not match its hash" in _problems(log)


def test_a_deleted_record(log):
    lines = _lines(log)
    _save(log, [*lines[:2], *lines[3:]])
    assert "line 3: does not follow line 2" in _problems(log)


def test_reordered_records(log):
    lines = _lines(log)
    _save(log, [lines[0], lines[2], lines[1], *lines[3:]])
    assert "does not follow" in _problems(log)


def test_a_truncated_tail(log):
    _save(log, _lines(log)[:4])
    assert "the tail was truncated" in _problems(log)


def test_an_appended_record_with_a_recomputed_hash(log):
    lines = _lines(log)
    last = json.loads(lines[-1])
    forged = {**last, "event": "policy_decision", "decision": "allow", "seq": last["seq"] + 1, "prev": last["hash"]}
    forged["hash"] = hashlib.sha256(_canonical(forged)).hexdigest()
    _save(log, [*lines, json.dumps(forged)])
    problems = _problems(log)
    assert "line 7: content does not match its hash" in problems


def test_a_fully_rechained_rewrite(log):
    records = [json.loads(line) for line in _lines(log)]
    records[1]["node"] = "rewritten"
    _save(log, _resign_without_key(records))
    problems = _problems(log)
    assert problems.count("content does not match its hash") == 6


def test_a_rechained_rewrite_with_a_forged_head(log):
    records = [json.loads(line) for line in _lines(log)][:3]
    lines = _resign_without_key(records)
    _save(log, lines)
    last = json.loads(lines[-1])["hash"]
    log.head_path.write_text(json.dumps({"count": 3, "last": last, "mac": hashlib.sha256(b"x").hexdigest()}))
    assert "the signed head was altered" in _problems(log)


@pytest.mark.parametrize("how", ["deleted", "emptied"])
def test_a_deleted_or_emptied_log(log, how):
    if how == "deleted":
        log.path.unlink()
    else:
        log.path.write_text("")
    assert "the log was deleted or emptied" in _problems(log)


def test_a_deleted_head(log):
    log.head_path.unlink()
    assert "the signed head is missing" in _problems(log)


def test_the_wrong_key_fails_every_signature(log):
    other = AuditLog(log.path, key="another-key-another-key-another-key")
    assert not other.verify().ok


def test_a_huge_input_cannot_break_the_chain(log):
    log.write("answer", {"question": "x" * 100_000, "nested": {"a": ["y" * 50_000] * 5}}, trace_id="big")
    log.write("node", {"node": "after"}, trace_id="after")
    assert log.verify().ok
    assert all(len(line.encode()) <= 16 * 1024 for line in _lines(log))


def test_without_an_env_key_a_private_key_file_is_used(tmp_path):
    audit = AuditLog(tmp_path / "audit.jsonl")
    audit.write("node", {"node": "a"}, trace_id="t")
    assert (tmp_path / "audit.jsonl.key").stat().st_mode & 0o777 == 0o600
    report = audit.verify()
    assert report.ok and any("KB_AGENT_AUDIT_KEY" in note for note in report.notes)


def test_concurrent_writers_keep_one_chain(tmp_path):
    import threading

    audit = AuditLog(tmp_path / "audit.jsonl", key=KEY)
    threads = [
        threading.Thread(target=lambda n=n: [audit.write("node", {"n": n, "i": i}, trace_id=str(n)) for i in range(20)])
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = audit.verify()
    assert report.ok and report.records == 80
