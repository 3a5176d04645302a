"""The knowledge graph of a PostgreSQL knowledge base, kept in the database (one row per knowledge base), so
every worker and host reads the edges the last index run wrote, not a file of its own."""

from __future__ import annotations

from pathlib import Path

from kb_agent.store.graph import KnowledgeGraph
from kb_agent.store.postgres.db import Database


class PostgresGraph(KnowledgeGraph):
    def __init__(self, db: Database, kb: str, folder: Path):
        self.db, self.kb = db, kb  # before the base class loads
        super().__init__(folder)

    def _stat(self) -> float:
        """The row's version: it grows with every save, so a reader reloads only after a write."""
        with self.db.read() as conn:
            row = conn.execute("SELECT version FROM kb_graph WHERE kb=%s", (self.kb,)).fetchone()
        return float(row[0]) if row else 0.0

    def _read(self) -> str:
        with self.db.read() as conn:
            row = conn.execute("SELECT data FROM kb_graph WHERE kb=%s", (self.kb,)).fetchone()
        if row is None:
            raise OSError(f"no graph saved for {self.kb!r}")
        return str(row[0])

    def _write(self, text: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO kb_graph(kb, data, version) VALUES (%s, %s, 1) "
                "ON CONFLICT (kb) DO UPDATE SET data = excluded.data, version = kb_graph.version + 1",
                (self.kb, text.replace("\x00", "")),
            )
