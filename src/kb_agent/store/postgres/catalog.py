"""The file manifest and chunk table of one knowledge base in PostgreSQL (same contract as the SQLite
catalog: `store/catalog.py`). Reads run in the store-internal scope; callers filter by ACL."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from kb_agent.governance.access import AccessFilter
from kb_agent.store.catalog import FileRecord, StoredChunk
from kb_agent.store.postgres.db import Database, acl_condition
from kb_agent.store.records import Chunk

FILE_COLS = "source, root, path, size, mtime, file_hash, acl, n_chunks, inherited_acl, real_path, acl_sources"
CHUNK_COLS = (
    "id, chunk_id, doc_id, source, path, start_line, end_line, page, title, heading_path, content_hash, "
    "acl, updated_at, source_type, text, metadata, embed_key"
)


def _file(r) -> FileRecord:
    return FileRecord(r[0], r[1], r[2], r[3], r[4], r[5], list(r[6]), r[7], list(r[8]), r[9] or "", r[10] or [])


class PostgresCatalog:
    def __init__(self, db: Database, kb: str):
        self.db = db
        self.kb = kb

    def _all(self, sql: str, params: tuple = ()) -> list:
        with self.db.read() as conn:
            return conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: tuple = ()):
        with self.db.read() as conn:
            return conn.execute(sql, params).fetchone()

    def _run(self, sql: str, params: tuple = ()) -> None:
        with self.db.write() as conn:
            conn.execute(sql, params)

    # -- meta ---------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._one("SELECT value FROM kb_meta WHERE kb=%s AND key=%s", (self.kb, key))
        return row[0] if row else default

    def meta(self) -> dict[str, str]:
        return dict(self._all("SELECT key, value FROM kb_meta WHERE kb=%s", (self.kb,)))

    def set_meta(self, key: str, value: str) -> None:
        self._run(
            "INSERT INTO kb_meta(kb, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (kb, key) DO UPDATE SET value=excluded.value",
            (self.kb, key, value),
        )

    def add_meta(self, key: str, delta: int) -> int:
        with self.db.write() as conn:
            row = conn.execute(
                "INSERT INTO kb_meta(kb, key, value) VALUES (%s, %s, %s) ON CONFLICT (kb, key) "
                "DO UPDATE SET value = (kb_meta.value::bigint + %s)::text RETURNING value",
                (self.kb, key, str(delta), delta),
            ).fetchone()
        return int(row[0])

    def bump(self, key: str) -> int:
        return self.add_meta(key, 1)

    def bump_generation(self) -> int:
        return self.bump("generation")

    @property
    def generation(self) -> int:
        return int(self.get_meta("generation") or "0")

    def integrity_problems(self) -> list[str]:
        return []  # PostgreSQL checks its own pages; amcheck is the operator's tool

    # -- roots and files ----------------------------------------------------------------------------
    def roots(self) -> dict[str, list[str]]:
        return {r: list(a) for r, a in self._all("SELECT root, acl FROM kb_roots WHERE kb=%s", (self.kb,))}

    def set_root(self, root: str, acl: list[str], now: float) -> None:
        self._run(
            "INSERT INTO kb_roots(kb, root, acl, added_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (kb, root) DO UPDATE SET acl=excluded.acl",
            (self.kb, root, sorted(set(acl)), now),
        )

    def delete_root(self, root: str) -> None:
        self._run("DELETE FROM kb_roots WHERE kb=%s AND root=%s", (self.kb, root))

    def files_under(self, root: str) -> dict[str, FileRecord]:
        rows = self._all(f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND root=%s", (self.kb, root))
        return {r[0]: _file(r) for r in rows}

    def file(self, source: str) -> FileRecord | None:
        row = self._one(f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND source=%s", (self.kb, source))
        return _file(row) if row else None

    def files_within(self, folder: str) -> dict[str, FileRecord]:
        prefix = folder.rstrip("/") + "/"
        rows = self._all(
            f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND (source=%s OR left(source, %s)=%s)",
            (self.kb, folder, len(prefix), prefix),
        )
        return {r[0]: _file(r) for r in rows}

    def file_by_path(self, path: str) -> FileRecord | None:
        row = self._one(
            f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND (path=%s OR source=%s) ORDER BY source LIMIT 1",
            (self.kb, path, path),
        )
        return _file(row) if row else None

    def other_file_at(self, path: str, source: str) -> FileRecord | None:
        row = self._one(
            f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND path=%s AND source<>%s LIMIT 1", (self.kb, path, source)
        )
        return _file(row) if row else None

    def find_files(self, fragment: str, limit: int) -> list[FileRecord]:
        rows = self._all(
            f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s AND strpos(lower(path), lower(%s)) > 0 "
            "ORDER BY length(path), path LIMIT %s",
            (self.kb, fragment, limit),
        )
        return [_file(r) for r in rows]

    def all_files(self) -> list[FileRecord]:
        return [_file(r) for r in self._all(f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s", (self.kb,))]

    def visible_files(self, access: AccessFilter) -> list[FileRecord]:
        if not access.restricted:
            return self.all_files()
        acl, params = acl_condition(access)
        rows = self._all(f"SELECT {FILE_COLS} FROM kb_files WHERE kb=%s{acl}", (self.kb, *params))
        return [f for f in map(_file, rows) if access.allows(f.acl)]

    def touch_file(self, source: str, size: int, mtime: float) -> None:
        self._run("UPDATE kb_files SET size=%s, mtime=%s WHERE kb=%s AND source=%s", (size, mtime, self.kb, source))

    def insert_file(self, record: FileRecord, n_chunks: int, now: float) -> None:
        self._run(
            f"INSERT INTO kb_files(kb, {FILE_COLS}, indexed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s::jsonb, %s) ON CONFLICT (kb, source) DO UPDATE SET root=excluded.root, path=excluded.path, "
            "size=excluded.size, mtime=excluded.mtime, file_hash=excluded.file_hash, acl=excluded.acl, "
            "n_chunks=excluded.n_chunks, inherited_acl=excluded.inherited_acl, real_path=excluded.real_path, "
            "acl_sources=excluded.acl_sources, indexed_at=excluded.indexed_at",
            (
                self.kb, record.source, record.root, record.path, record.size, record.mtime, record.file_hash,
                list(record.acl), n_chunks, list(record.inherited_acl), record.real_path,
                json.dumps(record.acl_sources), now,
            ),
        )  # fmt: skip

    def delete_file_row(self, source: str) -> None:
        self._run("DELETE FROM kb_files WHERE kb=%s AND source=%s", (self.kb, source))

    # -- chunks -------------------------------------------------------------------------------------
    def count_chunks(self) -> int:
        return int(self.get_meta("lex_docs") or "0")

    def count_files(self) -> int:
        return self._one("SELECT count(*) FROM kb_files WHERE kb=%s", (self.kb,))[0]

    def get_chunks(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        ids = list(ids)
        if not ids:
            return {}
        rows = self._all(f"SELECT {CHUNK_COLS} FROM kb_chunks WHERE kb=%s AND id = ANY(%s)", (self.kb, ids))
        return {row[0]: self._stored(row) for row in rows}

    def iter_chunks(self, batch: int = 2000) -> Iterator[StoredChunk]:
        last = 0
        while True:
            rows = self._all(
                f"SELECT {CHUNK_COLS} FROM kb_chunks WHERE kb=%s AND id > %s ORDER BY id LIMIT %s",
                (self.kb, last, batch),
            )
            if not rows:
                return
            yield from map(self._stored, rows)
            last = rows[-1][0]

    def chunks_of_source(self, source: str) -> list[StoredChunk]:
        rows = self._all(f"SELECT {CHUNK_COLS} FROM kb_chunks WHERE kb=%s AND source=%s ORDER BY id", (self.kb, source))
        return [self._stored(row) for row in rows]

    def chunks_in_lines(self, source: str, first: int, last: int) -> list[StoredChunk]:
        """The file's chunks that hold any of lines `first`..`last`."""
        rows = self._all(
            f"SELECT {CHUNK_COLS} FROM kb_chunks WHERE kb=%s AND source=%s AND end_line>=%s AND start_line<=%s "
            "ORDER BY start_line",
            (self.kb, source, first, last),
        )
        return [self._stored(row) for row in rows]

    def long_chunk_ids(self, min_chars: int) -> list[int]:
        """Rows whose text is longer than `min_chars` characters (the candidates for a tail vector)."""
        rows = self._all("SELECT id FROM kb_chunks WHERE kb=%s AND length(text) > %s ORDER BY id", (self.kb, min_chars))
        return [r[0] for r in rows]

    def embed_keys(self) -> list[tuple[int, str, str]]:
        rows = self._all("SELECT id, embed_key, acl FROM kb_chunks WHERE kb=%s ORDER BY id", (self.kb,))
        return [(i, key, json.dumps(list(acl))) for i, key, acl in rows]

    def doc_leads(self) -> list[tuple[str, str, int, str]]:
        return self._all(
            "SELECT min(title), doc_id, min(id), min(source) FROM kb_chunks WHERE kb=%s AND coalesce(title, '') <> '' "
            "GROUP BY doc_id",
            (self.kb,),
        )

    def _stored(self, row) -> StoredChunk:
        chunk = Chunk(
            kb=self.kb, doc_id=row[2], chunk_id=row[1], source=row[3], path=row[4], start_line=row[5],
            end_line=row[6], page=row[7], title=row[8] or "", heading_path=row[9] or [], content_hash=row[10] or "",
            acl=list(row[11]), updated_at=row[12] or 0.0, source_type=row[13] or "text", text=row[14],
            metadata=row[15] or {},
        )  # fmt: skip
        return StoredChunk(id=row[0], chunk=chunk, embed_key=row[16])
