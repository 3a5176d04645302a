"""Per-user daily token budgets (persisted, so restarts do not reset them) and per-user request rates."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import defaultdict, deque
from collections.abc import Hashable
from datetime import UTC, datetime
from pathlib import Path

from kb_agent.governance.errors import LimitExceeded

__all__ = ["Budgets", "LimitExceeded", "RateLimiter"]

SOFT_LIMIT = 0.8


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


class RateLimiter:
    """Sliding one-minute windows, one per key (a user; a (caller, tool) pair)."""

    def __init__(self):
        self._calls: dict[Hashable, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def wait_s(self, key: Hashable, per_minute: int | None) -> float:
        """0 = admitted (and counted); otherwise the seconds until the window has room."""
        if not per_minute:
            return 0.0
        now = time.monotonic()
        with self._lock:
            window = self._calls[key]
            while window and now - window[0] > 60:
                window.popleft()
            if len(window) >= per_minute:
                return max(0.001, 60 - (now - window[0]))
            window.append(now)
            return 0.0


class Budgets:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS usage (user TEXT, day TEXT, tokens INTEGER, PRIMARY KEY (user, day))"
        )
        self._lock = threading.Lock()
        self._requests = RateLimiter()

    def used_today(self, user_id: str) -> int:
        row = self._db.execute("SELECT tokens FROM usage WHERE user=? AND day=?", (user_id, _today())).fetchone()
        return int(row[0]) if row else 0

    def check(self, user_id: str, budget: int | None, rate_per_min: int | None) -> str | None:
        """Raise when a hard limit is reached; return a warning past the soft limit."""
        wait = self._requests.wait_s(user_id, rate_per_min)
        if wait:
            raise LimitExceeded(
                f"rate limit reached: {rate_per_min} requests per minute for {user_id!r}; try again in {wait:.0f}s"
            )
        if budget:
            used = self.used_today(user_id)
            if used >= budget:
                raise LimitExceeded(
                    f"daily token budget reached: {used:,} of {budget:,} tokens used by "
                    f"{user_id!r} today; it resets at 00:00 UTC"
                )
            if used >= SOFT_LIMIT * budget:
                return f"{used:,} of today's {budget:,}-token budget used ({used / budget:.0%})"
        return None

    def add(self, user_id: str, tokens: int) -> None:
        if tokens <= 0:
            return
        with self._lock:
            self._db.execute(
                "INSERT INTO usage VALUES (?, ?, ?) ON CONFLICT(user, day) "
                "DO UPDATE SET tokens = tokens + excluded.tokens",
                (user_id, _today(), tokens),
            )

    def close(self) -> None:
        self._db.close()
