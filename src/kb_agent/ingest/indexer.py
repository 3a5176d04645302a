"""`kb-agent index`: bring a knowledge base in line with the files under its roots, incrementally."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kb_agent.ingest.chunker import chunk_document
from kb_agent.ingest.loaders import LoaderError, load
from kb_agent.ingest.scanner import FoundFile, scan
from kb_agent.store.access import NOBODY
from kb_agent.store.catalog import FileRecord
from kb_agent.store.kb import KnowledgeBase


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    chunks_added: int = 0
    chunks_removed: int = 0
    seconds: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks_added / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict:
        return {
            "added": len(self.added), "updated": len(self.updated), "deleted": len(self.deleted),
            "unchanged": self.unchanged, "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "chunks_added": self.chunks_added, "chunks_removed": self.chunks_removed,
            "seconds": round(self.seconds, 3), "chunks_per_s": round(self.chunks_per_s, 1),
        }


ProgressFn = Callable[[int, int, str], None]


class Indexer:
    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.settings = kb.settings

    def run(
        self, paths: list[Path], *, acl: list[str] | None = None, on_progress: ProgressFn | None = None
    ) -> IndexReport:
        """Index `paths` (folders or files). `acl` set = the groups for this root from now on."""
        report = IndexReport()
        started = time.perf_counter()
        roots = []
        for path in paths:
            resolved = Path(path).expanduser().resolve()
            if not resolved.exists():
                raise FileNotFoundError(f"no such file or folder: {path}")
            roots.append(resolved)
        known_roots = self.kb.catalog.roots()
        with self.kb.writing():
            for root in roots:
                root_acl = acl if acl is not None else known_roots.get(str(root), [])
                self.kb.catalog.set_root(str(root), root_acl, time.time())
                self._index_root(root, root_acl, report, on_progress)
        report.seconds = time.perf_counter() - started
        return report

    def _index_root(self, root: Path, root_acl: list[str], report: IndexReport, on_progress) -> None:
        catalog = self.kb.catalog
        previous = catalog.files_under(str(root))
        found = list(scan(root))
        seen: set[str] = set()
        max_bytes = int(self.settings.max_file_mb * 1024 * 1024)
        for done, item in enumerate(found, start=1):
            if on_progress:
                on_progress(done, len(found), item.display)
            source = str(item.path)
            seen.add(source)
            if item.skip_reason:
                report.skipped.append((item.display, item.skip_reason))
                continue
            try:
                stat = item.path.stat()
            except OSError as exc:
                report.skipped.append((item.display, f"cannot stat: {exc.strerror}"))
                continue
            if stat.st_size == 0:
                report.skipped.append((item.display, "empty file"))
                continue
            if stat.st_size > max_bytes:
                report.skipped.append((item.display, f"larger than KB_AGENT_MAX_FILE_MB={self.settings.max_file_mb}"))
                continue
            self._index_file(item, root, root_acl, stat, previous.get(source), report)
        for source, record in previous.items():
            if source not in seen:
                report.chunks_removed += len(catalog.delete_file(source))
                self.kb.lexical.delete_source(source)
                report.deleted.append(record.path)

    def _index_file(self, item: FoundFile, root: Path, root_acl, stat, old: FileRecord | None, report) -> None:
        base_acl = item.inherited_acl if item.inherited_acl is not None else list(root_acl)
        inherited = sorted(set(base_acl))
        if old and old.size == stat.st_size and old.mtime == stat.st_mtime and old.inherited_acl == inherited:
            report.unchanged += 1  # same size and mtime: not even read
            return
        try:
            data = item.path.read_bytes()
        except OSError as exc:
            report.skipped.append((item.display, f"cannot read: {exc.strerror}"))
            return
        file_hash = hashlib.sha256(data).hexdigest()
        try:
            docs = load(item.path, data)
        except LoaderError as exc:
            kept = "; previous version kept" if old else ""
            report.skipped.append((item.display, f"{exc}{kept}"))
            return
        except Exception as exc:  # a third-party parser blew up: skip this file, never the run
            report.skipped.append((item.display, f"parser error: {type(exc).__name__}: {exc}"[:300]))
            return
        doc_acls = [sorted(set(doc.acl if doc.acl is not None else base_acl)) for doc in docs]
        if old and old.file_hash == file_hash and old.inherited_acl == inherited:  # front matter is in the hash
            self.kb.catalog.touch_file(str(item.path), stat.st_size, stat.st_mtime)
            report.unchanged += 1
            return
        chunks = []
        for doc, doc_acl in zip(docs, doc_acls, strict=True):
            doc_id = f"{item.display}#{doc.key}" if doc.key else item.display
            chunks.extend(
                chunk_document(
                    doc, kb=self.kb.name, doc_id=doc_id, source=str(item.path), path=item.display,
                    acl=doc_acl, updated_at=stat.st_mtime, max_chars=self.settings.chunk_max_chars,
                    overlap_chars=self.settings.chunk_overlap_chars,
                )
            )
        if not chunks:
            report.skipped.append((item.display, "no text content"))
            return
        record = FileRecord(
            source=str(item.path), root=str(root), path=item.display, size=stat.st_size,
            mtime=stat.st_mtime, file_hash=file_hash, acl=_file_acl(doc_acls, inherited), n_chunks=len(chunks),
            inherited_acl=inherited,
        )
        keys = [self.kb.embed_key_for(chunk) for chunk in chunks]
        removed, added = self.kb.catalog.replace_file(record, chunks, keys, time.time())
        if removed:
            self.kb.lexical.delete_source(record.source)
        self.kb.lexical.add(added)
        report.chunks_removed += len(removed)
        report.chunks_added += len(added)
        (report.updated if old else report.added).append(item.display)


def _file_acl(doc_acls: list[list[str]], inherited: list[str]) -> list[str]:
    """Who may read the whole file: its documents' common ACL (front matter may override the folder's)."""
    if doc_acls and all(acl == doc_acls[0] for acl in doc_acls):
        return doc_acls[0]
    return [NOBODY]  # documents disagree: only an unrestricted caller may read the raw file
