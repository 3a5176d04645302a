"""SQLite catalog of one knowledge base: the file manifest and every chunk with its metadata.

It is the source of truth; the lexical and dense indexes are derived from it and can be rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kb_agent.governance.access import AccessFilter
from kb_agent.governance.errors import StoreDamaged
from kb_agent.store.records import Chunk

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roots (root TEXT PRIMARY KEY, acl TEXT NOT NULL DEFAULT '[]', added_at REAL);
CREATE TABLE IF NOT EXISTS files (
    source TEXT PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL, size INTEGER, mtime REAL,
    file_hash TEXT, acl TEXT NOT NULL, inherited_acl TEXT NOT NULL DEFAULT '[]', indexed_at REAL,
    n_chunks INTEGER
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, source TEXT NOT NULL, path TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, page INTEGER, title TEXT, heading_path TEXT,
    content_hash TEXT, acl TEXT NOT NULL, updated_at REAL, source_type TEXT, text TEXT NOT NULL,
    metadata TEXT, embed_key TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS chunk_acl (chunk INTEGER NOT NULL, grp TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_acl_grp ON chunk_acl(grp, chunk);
CREATE INDEX IF NOT EXISTS chunk_acl_chunk ON chunk_acl(chunk);
"""


@dataclass
class FileRecord:
    source: str
    root: str
    path: str
    size: int
    mtime: float
    file_hash: str
    acl: list[str]  # effective: who may read the file (grep, read_file)
    n_chunks: int
    inherited_acl: list[str]  # from --acl / .kbacl, before front matter; detects ACL changes
    real_path: str = ""  # what the source resolved to when indexed (a symlink's target)
    acl_sources: list[dict] = field(default_factory=list)  # {kind, where, groups}: how `acl` was derived


@dataclass
class StoredChunk:
    id: int
    chunk: Chunk
    embed_key: str


def lines_of(stored: Iterable[StoredChunk]) -> dict[int, str]:
    """Line number -> text, rebuilt from line-exact chunks (a chunk's text is its lines, one per line; where two
    chunks hold a line, the first one read wins)."""
    lines: dict[int, str] = {}
    for each in stored:
        for offset, line in enumerate(each.chunk.text.split("\n")):
            lines.setdefault(each.chunk.start_line + offset, line)
    return lines


_FILE_COLS = "source, root, path, size, mtime, file_hash, acl, n_chunks, inherited_acl, real_path, acl_sources"
_ADDED_COLUMNS = {"real_path": "TEXT NOT NULL DEFAULT ''", "acl_sources": "TEXT NOT NULL DEFAULT '[]'"}


def _file_record(r) -> FileRecord:
    return FileRecord(
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
        r[5],
        json.loads(r[6]),
        r[7],
        json.loads(r[8]),
        r[9] or "",
        json.loads(r[10] or "[]"),
    )


_CHUNK_COLS = (
    "id, chunk_id, doc_id, source, path, start_line, end_line, page, title, heading_path, content_hash, "
    "acl, updated_at, source_type, text, metadata, embed_key"
)


class Catalog:
    def __init__(self, path: Path, kb: str):
        self.path = path
        self.kb = kb
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._lock = threading.RLock()
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreDamaged(
                f"{path} is damaged ({exc}); the catalog is the knowledge base's source of truth and cannot be "
                "rebuilt from its other files: index the sources again into a new knowledge base "
                "(`kb-agent index PATH --kb NEW`)"
            ) from exc
        present = {row[1] for row in self._db.execute("PRAGMA table_info(files)")}
        for column, kind in _ADDED_COLUMNS.items():  # catalogs written by earlier versions
            if column not in present:
                self._db.execute(f"ALTER TABLE files ADD COLUMN {column} {kind}")

    def integrity_problems(self) -> list[str]:
        rows = [r[0] for r in self._db.execute("PRAGMA quick_check")]
        return [] if rows == ["ok"] else rows

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- meta ---------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def bump(self, key: str) -> int:
        value = int(self.get_meta(key) or "0") + 1
        self.set_meta(key, str(value))
        return value

    def bump_generation(self) -> int:
        return self.bump("generation")

    @property
    def generation(self) -> int:
        return int(self.get_meta("generation") or "0")

    # -- roots and files ----------------------------------------------------------------------------
    def roots(self) -> dict[str, list[str]]:
        return {r: json.loads(a) for r, a in self._db.execute("SELECT root, acl FROM roots")}

    def set_root(self, root: str, acl: list[str], now: float) -> None:
        self._db.execute(
            "INSERT INTO roots(root, acl, added_at) VALUES (?, ?, ?) ON CONFLICT(root) DO UPDATE SET acl=excluded.acl",
            (root, json.dumps(sorted(set(acl))), now),
        )

    def delete_root(self, root: str) -> None:
        self._db.execute("DELETE FROM roots WHERE root=?", (root,))

    def files_under(self, root: str) -> dict[str, FileRecord]:
        rows = self._db.execute(f"SELECT {_FILE_COLS} FROM files WHERE root=?", (root,))
        return {r[0]: _file_record(r) for r in rows}

    def file(self, source: str) -> FileRecord | None:
        row = self._db.execute(f"SELECT {_FILE_COLS} FROM files WHERE source=?", (source,)).fetchone()
        return _file_record(row) if row else None

    def files_within(self, folder: str) -> dict[str, FileRecord]:
        """Files whose source is `folder` itself or lies under it, whichever root indexed them."""
        prefix = folder.rstrip("/") + "/"  # LIKE is case-insensitive in SQLite; paths are not
        rows = self._db.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE source=? OR substr(source, 1, ?)=?", (folder, len(prefix), prefix)
        )
        return {r[0]: _file_record(r) for r in rows}

    def file_by_path(self, path: str) -> FileRecord | None:
        row = self._db.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE path=? OR source=? LIMIT 1", (path, path)
        ).fetchone()
        return _file_record(row) if row else None

    def other_file_at(self, path: str, source: str) -> FileRecord | None:
        """The file other than `source` whose citation path is `path` (two indexed folders of the same name)."""
        row = self._db.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE path=? AND source<>? LIMIT 1", (path, source)
        ).fetchone()
        return _file_record(row) if row else None

    def find_files(self, fragment: str, limit: int) -> list[FileRecord]:
        """Files whose path contains the fragment (case-insensitive), shortest paths first."""
        escaped = fragment.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._db.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE lower(path) LIKE ? ESCAPE '\\' ORDER BY length(path), path LIMIT ?",
            (f"%{escaped}%", limit),
        )
        return [_file_record(r) for r in rows]

    def all_files(self) -> list[FileRecord]:
        return [_file_record(r) for r in self._db.execute(f"SELECT {_FILE_COLS} FROM files")]

    def touch_file(self, source: str, size: int, mtime: float) -> None:
        self._db.execute("UPDATE files SET size=?, mtime=? WHERE source=?", (size, mtime, source))

    def delete_file(self, source: str) -> list[int]:
        ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE source=?", (source,))]
        self._delete_chunk_ids(ids)
        self._db.execute("DELETE FROM files WHERE source=?", (source,))
        return ids

    def replace_file(self, record: FileRecord, chunks: list[Chunk], embed_keys: list[str], now: float):
        """Swap a file's chunks for new ones; returns (removed ids, [(new id, chunk)])."""
        removed = self.delete_file(record.source)
        self._db.execute(
            f"INSERT INTO files({_FILE_COLS}, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.source,
                record.root,
                record.path,
                record.size,
                record.mtime,
                record.file_hash,
                json.dumps(record.acl),
                len(chunks),
                json.dumps(record.inherited_acl),
                record.real_path,
                json.dumps(record.acl_sources),
                now,
            ),
        )
        added = []
        for chunk, key in zip(chunks, embed_keys, strict=True):
            cur = self._db.execute(
                f"INSERT INTO chunks({_CHUNK_COLS.replace('id, ', '', 1)}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    chunk.chunk_id,
                    chunk.doc_id,
                    chunk.source,
                    chunk.path,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.page,
                    chunk.title,
                    json.dumps(chunk.heading_path, ensure_ascii=False),
                    chunk.content_hash,
                    json.dumps(chunk.acl),
                    chunk.updated_at,
                    chunk.source_type,
                    chunk.text,
                    json.dumps(chunk.metadata, ensure_ascii=False, default=str),
                    key,
                ),
            )
            chunk_row = cur.lastrowid
            self._db.executemany("INSERT INTO chunk_acl(chunk, grp) VALUES (?, ?)", [(chunk_row, g) for g in chunk.acl])
            added.append((chunk_row, chunk))
        return removed, added

    def _delete_chunk_ids(self, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM chunks WHERE id IN ({marks})", part)
            self._db.execute(f"DELETE FROM chunk_acl WHERE chunk IN ({marks})", part)

    # -- chunks -------------------------------------------------------------------------------------
    def count_chunks(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def count_files(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM files").fetchone()[0]

    def get_chunks(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        ids = list(ids)
        out: dict[int, StoredChunk] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(f"SELECT {_CHUNK_COLS} FROM chunks WHERE id IN ({marks})", part):
                out[row[0]] = self._row_to_chunk(row)
        return out

    def iter_chunks(self, batch: int = 2000) -> Iterator[StoredChunk]:
        last = 0
        while True:
            rows = self._db.execute(
                f"SELECT {_CHUNK_COLS} FROM chunks WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield self._row_to_chunk(row)
            last = rows[-1][0]

    def chunks_of_source(self, source: str) -> list[StoredChunk]:
        rows = self._db.execute(f"SELECT {_CHUNK_COLS} FROM chunks WHERE source=? ORDER BY id", (source,))
        return [self._row_to_chunk(row) for row in rows]

    def chunks_in_lines(self, source: str, first: int, last: int) -> list[StoredChunk]:
        """The file's chunks that hold any of lines `first`..`last`."""
        rows = self._db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE source=? AND end_line>=? AND start_line<=? ORDER BY start_line",
            (source, first, last),
        )
        return [self._row_to_chunk(row) for row in rows]

    def long_chunk_ids(self, min_chars: int) -> list[int]:
        """Rows whose text is longer than `min_chars` characters (the candidates for a tail vector)."""
        rows = self._db.execute("SELECT id FROM chunks WHERE length(text) > ? ORDER BY id", (min_chars,))
        return [r[0] for r in rows]

    def embed_keys(self) -> list[tuple[int, str, str]]:
        """(id, embed_key, acl json) for every chunk, in id order."""
        return self._db.execute("SELECT id, embed_key, acl FROM chunks ORDER BY id").fetchall()

    def doc_leads(self) -> list[tuple[str, str, int, str]]:
        """(title, doc_id, first chunk row id, source) per document: what title links match against."""
        return self._db.execute(
            "SELECT title, doc_id, MIN(id), source FROM chunks WHERE title IS NOT NULL AND title != '' GROUP BY doc_id"
        ).fetchall()

    def visible_files(self, access: AccessFilter) -> list[FileRecord]:
        return [f for f in self.all_files() if access.allows(f.acl)]

    def _row_to_chunk(self, row) -> StoredChunk:
        chunk = Chunk(
            kb=self.kb,
            doc_id=row[2],
            chunk_id=row[1],
            source=row[3],
            path=row[4],
            start_line=row[5],
            end_line=row[6],
            page=row[7],
            title=row[8] or "",
            heading_path=json.loads(row[9] or "[]"),
            content_hash=row[10] or "",
            acl=json.loads(row[11]),
            updated_at=row[12] or 0.0,
            source_type=row[13] or "text",
            text=row[14],
            metadata=json.loads(row[15] or "{}"),
        )
        return StoredChunk(id=row[0], chunk=chunk, embed_key=row[16])
