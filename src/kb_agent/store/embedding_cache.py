"""Vectors keyed by the hash of the exact text embedded, one SQLite file per model: unchanged text
(in any KB, after a rename or a re-index) is never embedded twice."""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

log = logging.getLogger("kb_agent.store")


def embed_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class EmbeddingCache:
    def __init__(self, folder: Path, model_id: str):
        folder.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:120]
        self.path = folder / f"{slug}.sqlite"
        self._lock = threading.Lock()
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:  # a cache: set the damaged file aside (kept) and start empty
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            log.warning("embedding cache %s is damaged (%s): moved to %s; vectors are computed again", self.path,
                        exc, aside.name)  # fmt: skip
            self.path.rename(aside)
            for suffix in ("-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def integrity_problems(self) -> list[str]:
        rows = [r[0] for r in self._db.execute("PRAGMA quick_check")]
        return [] if rows == ["ok"] else rows

    def reset(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM vec")

    def missing(self, keys: Iterable[str]) -> list[str]:
        keys = list(dict.fromkeys(keys))
        have: set[str] = set()
        for start in range(0, len(keys), 900):
            part = keys[start : start + 900]
            marks = ",".join("?" * len(part))
            have.update(r[0] for r in self._db.execute(f"SELECT key FROM vec WHERE key IN ({marks})", part))
        return [k for k in keys if k not in have]

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 900):
            part = keys[start : start + 900]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO vec(key, v) VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vec").fetchone()[0]

    def close(self) -> None:
        self._db.close()
