"""Vectors keyed by the hash of the exact text embedded, one SQLite file per model: unchanged text
(in any KB, after a rename or a re-index) is never embedded twice."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np


def embed_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class EmbeddingCache:
    def __init__(self, folder: Path, model_id: str):
        folder.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:120]
        self.path = folder / f"{slug}.sqlite"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self._lock = threading.Lock()

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
