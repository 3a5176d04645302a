"""Append-only JSONL audit trail under the data folder (one record per event, with the trace id)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path


class AuditLog:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, event: str, payload: dict, *, trace_id: str, task_id: str | None = None,
              parent_task_id: str | None = None) -> None:
        record = {"ts": time.time(), "event": event, "trace_id": trace_id, "task_id": task_id,
                  "parent_task_id": parent_task_id, **payload}
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def records(self, event: str | None = None) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if event is None or record.get("event") == event:
                out.append(record)
        return out
