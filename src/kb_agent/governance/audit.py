"""Append-only audit trail under the data folder that cannot be quietly rewritten.

Each record carries a sequence number, the MAC of the previous record (`prev`) and its own MAC (`hash`):
HMAC-SHA256 over its canonical JSON, keyed with a secret kept outside the log (KB_AGENT_AUDIT_KEY, or a
key file created on first use with mode 0600). A signed head - the record count and the last MAC, MAC'd
too - is rewritten with every record. `verify` therefore finds an edited, deleted, inserted or reordered
record, a truncated tail, a record appended or a chain re-signed without the key, and a deleted or
emptied log. Payloads are masked and each record is bounded in size, so no input can break the chain."""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kb_agent.governance.masking import mask_text

GENESIS = "0" * 64
MAX_RECORD_BYTES = 16 * 1024
_FIELD_CHARS = 2000


def _canonical(record: dict) -> bytes:
    return json.dumps(
        {k: v for k, v in record.items() if k != "hash"}, sort_keys=True, ensure_ascii=False, default=str
    ).encode()


def _masked(value):
    if isinstance(value, str):
        return mask_text(value)[0]
    if isinstance(value, dict):
        return {str(k): _masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v) for v in value]
    return value


def _bounded(payload: dict) -> dict:
    """Long strings are cut (with a note) until the record fits MAX_RECORD_BYTES."""

    def cut(value, limit: int):
        if isinstance(value, str) and len(value) > limit:
            return value[:limit] + f"…[{len(value) - limit} chars cut]"
        if isinstance(value, dict):
            return {k: cut(v, limit) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v, limit) for v in value[:200]]
        return value

    limit = _FIELD_CHARS
    while len(json.dumps(payload, ensure_ascii=False, default=str).encode()) > MAX_RECORD_BYTES - 1024:
        if limit < 50:
            return {"truncated": True, "fields": sorted(payload)[:50]}
        payload = cut(payload, limit)
        limit //= 4
    return payload


@dataclass
class VerifyReport:
    records: int
    ok: bool
    problems: list[str]
    notes: list[str] = field(default_factory=list)


class AuditLog:
    def __init__(self, path: Path, key: str | None = None):
        self.path = path
        self.head_path = path.with_name(path.name + ".head")
        self.key_path = path.with_name(path.name + ".key")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._key_text = key
        self._key: bytes | None = None
        self._lock = threading.Lock()

    # -- the key ------------------------------------------------------------------------------------
    @property
    def key_in_env(self) -> bool:
        return bool(self._key_text)

    def _secret(self, create: bool) -> bytes | None:
        if self._key is None:
            if self._key_text:
                self._key = hashlib.sha256(self._key_text.encode()).digest()
            elif self.key_path.exists():
                self._key = bytes.fromhex(self.key_path.read_text().strip())
            elif create:
                fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(secrets.token_hex(32))
                self._key = bytes.fromhex(self.key_path.read_text().strip())
        return self._key

    def _mac(self, key: bytes, data: bytes) -> str:
        return hmac.new(key, data, hashlib.sha256).hexdigest()

    def _head_mac(self, key: bytes, count: int, last: str) -> str:
        return self._mac(key, f"head:{count}:{last}".encode())

    def _read_head(self) -> dict | None:
        try:
            head = json.loads(self.head_path.read_text())
        except (OSError, ValueError):
            return None
        return head if isinstance(head, dict) else None

    # -- writing ------------------------------------------------------------------------------------
    def write(
        self, event: str, payload: dict, *, trace_id: str, task_id: str | None = None, parent_task_id: str | None = None
    ) -> None:
        with self._lock, open(self.path, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                key = self._secret(create=True)
                assert key is not None  # create=True always returns one
                count, last = self._tail(handle)
                record = {
                    "seq": count + 1,
                    "ts": time.time(),
                    "event": event,
                    "trace_id": trace_id,
                    "task_id": task_id,
                    "parent_task_id": parent_task_id,
                    **_bounded(_masked(payload)),
                    "prev": last,
                }
                record["hash"] = self._mac(key, _canonical(record))
                handle.write((json.dumps(record, ensure_ascii=False, default=str) + "\n").encode())
                handle.flush()
                os.fsync(handle.fileno())
                self._write_head(key, count + 1, record["hash"])
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _tail(self, handle) -> tuple[int, str]:
        """(signed records so far, last MAC): from the head, or - head missing - from the log's last line."""
        head = self._read_head()
        if head is not None and isinstance(head.get("count"), int) and isinstance(head.get("last"), str):
            return head["count"], head["last"]
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 4 * MAX_RECORD_BYTES))
        for raw in reversed(handle.read().splitlines()):
            try:
                record = json.loads(raw)
                return int(record["seq"]), str(record["hash"])
            except (ValueError, KeyError, TypeError):
                continue
        return 0, GENESIS

    def _write_head(self, key: bytes, count: int, last: str) -> None:
        tmp = self.head_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"count": count, "last": last, "mac": self._head_mac(key, count, last)}))
        tmp.replace(self.head_path)

    # -- reading ------------------------------------------------------------------------------------
    def records(self, event: str | None = None, trace_id: str | None = None) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (event is None or record.get("event") == event) and (
                trace_id is None or record.get("trace_id") == trace_id
            ):
                out.append(record)
        return out

    def verify(self) -> VerifyReport:
        key = self._secret(create=False)
        head = self._read_head()
        lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []
        if key is None:
            if lines or head:
                return VerifyReport(
                    len(lines),
                    False,
                    [
                        "no audit key: set KB_AGENT_AUDIT_KEY (or restore "
                        f"{self.key_path.name}) to verify the signatures"
                    ],
                )
            return VerifyReport(0, True, [])
        problems, notes = self._verify_lines(key, lines)
        signed = [json.loads(line) for line in lines if _is_signed(line)]
        if head is None:
            if signed:
                problems.append("the signed head is missing (deleted, or the log was copied without it)")
        elif head.get("mac") != self._head_mac(key, head.get("count", -1), str(head.get("last"))):
            problems.append("the signed head was altered (its signature does not match)")
        elif not signed and head.get("count", 0) > 0:
            problems.append(f"the log was deleted or emptied: the signed head records {head['count']} records")
        elif signed and head.get("count") != signed[-1].get("seq"):
            problems.append(
                f"the log ends at record {signed[-1].get('seq')} but the signed head says "
                f"{head.get('count')} (the tail was truncated, or records were added without the key)"
            )
        elif signed and head.get("last") != signed[-1].get("hash"):
            problems.append("the last record is not the one the signed head was written with")
        if not self.key_in_env:
            notes.append(
                f"the audit key is in {self.key_path} beside the log; set KB_AGENT_AUDIT_KEY to keep it "
                "elsewhere (whoever can write both can re-sign the log)"
            )
        return VerifyReport(len(lines), not problems, problems, notes)

    def _verify_lines(self, key: bytes, lines: list[str]) -> tuple[list[str], list[str]]:
        problems: list[str] = []
        notes: list[str] = []
        previous: str | None = GENESIS
        expected_seq, legacy = 1, 0
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(f"line {number}: not JSON (edited or torn)")
                previous = None
                continue
            if "seq" not in record:
                if expected_seq == 1 and not problems:  # written by a version before signed records
                    legacy += 1
                    continue
                problems.append(f"line {number}: has no sequence number or signature (inserted)")
                continue
            if record.get("hash") != self._mac(key, _canonical(record)):
                problems.append(
                    f"line {number}: content does not match its hash (edited, or signed without the audit key)"
                )
            if (previous is not None and record.get("prev") != previous) or record.get("seq") != expected_seq:
                problems.append(
                    f"line {number}: does not follow line {number - 1} (a record was deleted, inserted or reordered)"
                )
            previous = record.get("hash")
            expected_seq = (record.get("seq") if isinstance(record.get("seq"), int) else expected_seq) + 1
        if legacy:
            notes.append(f"{legacy} unsigned record(s) from an earlier version precede the signed chain")
        return problems, notes


def _is_signed(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and "seq" in record
