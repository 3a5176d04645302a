"""Append-only, hash-chained JSONL audit trail under the data folder.

Each record carries the hash of the previous one and its own hash (sha256 over the canonical JSON of
the record without `hash`), so an edited, reordered or deleted record breaks the chain and
`kb-agent audit verify` reports where. Payloads are masked before they are written."""

from __future__ import annotations

import fcntl
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kb_agent.governance.masking import mask_text

GENESIS = "0" * 64


def _digest(record: dict) -> str:
    body = json.dumps({k: v for k, v in record.items() if k != "hash"}, sort_keys=True, ensure_ascii=False,
                      default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _masked(value):
    if isinstance(value, str):
        return mask_text(value)[0]
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v) for v in value]
    return value


@dataclass
class VerifyReport:
    records: int
    ok: bool
    problems: list[str]


class AuditLog:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    @staticmethod
    def _tail_hash(handle) -> str:
        """Hash of the last record (read under the file lock: other processes append too)."""
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        for raw in reversed(handle.read().splitlines()):
            try:
                return json.loads(raw)["hash"]
            except (ValueError, KeyError):
                continue
        return GENESIS

    def write(self, event: str, payload: dict, *, trace_id: str, task_id: str | None = None,
              parent_task_id: str | None = None) -> None:
        with self._lock, open(self.path, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                record = {"ts": time.time(), "event": event, "trace_id": trace_id, "task_id": task_id,
                          "parent_task_id": parent_task_id, **_masked(payload), "prev": self._tail_hash(handle)}
                record["hash"] = _digest(record)
                handle.write((json.dumps(record, ensure_ascii=False, default=str) + "\n").encode())
                handle.flush()
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def records(self, event: str | None = None, trace_id: str | None = None) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (event is None or record.get("event") == event) and (trace_id is None or
                                                                     record.get("trace_id") == trace_id):
                out.append(record)
        return out

    def verify(self) -> VerifyReport:
        problems: list[str] = []
        previous, count = GENESIS, 0
        if not self.path.exists():
            return VerifyReport(0, True, [])
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            count += 1
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(f"line {number}: not JSON (edited or torn)")
                previous = None
                continue
            if record.get("hash") != _digest(record):
                problems.append(f"line {number}: content does not match its hash (edited)")
            if previous is not None and record.get("prev") != previous:
                problems.append(f"line {number}: does not follow line {number - 1} (a record was deleted, "
                                "inserted or reordered)")
            previous = record.get("hash")
        return VerifyReport(count, not problems, problems)
