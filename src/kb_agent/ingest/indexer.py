"""`kb-agent index`: bring a knowledge base in line with the files under its roots, incrementally."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kb_agent.governance.access import NOBODY
from kb_agent.ingest.acl import AclError, AclResolver, AclSource, check_group, combine
from kb_agent.ingest.chunker import chunk_document
from kb_agent.ingest.graph_job import sync_graph
from kb_agent.ingest.lexicon_job import sync_lexicon
from kb_agent.ingest.loaders import LoaderError, load
from kb_agent.ingest.scanner import FoundFile, scan
from kb_agent.store.base import KnowledgeBase
from kb_agent.store.catalog import FileRecord


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (path, message): indexed, but look at it
    chunks_added: int = 0
    chunks_removed: int = 0
    seconds: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks_added / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "deleted": len(self.deleted),
            "unchanged": self.unchanged,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "warnings": [{"path": p, "message": m} for p, m in self.warnings],
            "chunks_added": self.chunks_added,
            "chunks_removed": self.chunks_removed,
            "seconds": round(self.seconds, 3),
            "chunks_per_s": round(self.chunks_per_s, 1),
        }


ProgressFn = Callable[[int, int, str], None]


class Indexer:
    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.settings = kb.settings

    def run(
        self, paths: list[Path], *, acl: list[str] | None = None, on_progress: ProgressFn | None = None
    ) -> IndexReport:
        """Index `paths` (folders or files). `acl` set = the groups for these roots from now on."""
        report = IndexReport()
        started = time.perf_counter()
        if acl is not None:
            acl = [check_group(g.strip(), "--acl") for g in acl]
        roots = []
        for path in paths:
            resolved = Path(path).expanduser().resolve()
            if not resolved.exists():
                raise FileNotFoundError(f"no such file or folder: {path}")
            roots.append(resolved)
        with self.kb.writing():
            known = self.kb.roots()
            for root in roots:  # registered first: every root's --acl applies to files any root reaches
                self.kb.set_root(str(root), acl if acl is not None else known.get(str(root), []))
            all_roots = self.kb.roots()
            resolver = AclResolver(all_roots)
            for root in roots:
                self._index_root(root, resolver, [Path(r) for r in all_roots], report, on_progress)
        sync_graph(self.kb)
        sync_lexicon(self.kb)
        report.seconds = time.perf_counter() - started
        return report

    def remove(self, paths: list[Path]) -> IndexReport:
        """Forget these indexed roots (they may be gone from disk): their files leave every search."""
        report = IndexReport()
        started = time.perf_counter()
        with self.kb.writing():
            known = self.kb.roots()
            for path in paths:
                root = os.path.abspath(os.path.expanduser(path))
                if root not in known:
                    listed = ", ".join(sorted(known)) or "none"
                    raise FileNotFoundError(f"{path} is not an indexed root of {self.kb.name!r} (roots: {listed})")
                removed, chunks = self.kb.remove_root(root)
                report.deleted += removed
                report.chunks_removed += chunks
        sync_graph(self.kb)
        sync_lexicon(self.kb)
        report.seconds = time.perf_counter() - started
        return report

    def repair(self) -> list[str]:
        """Check every store file of the KB and rebuild the derived ones (keyword index, dense store, graph)."""
        with self.kb.writing():
            done = self.kb.repair_stores()
        sync_graph(self.kb)
        sync_lexicon(self.kb)
        return done

    def missing_roots(self) -> list[Path]:
        """Indexed roots that no longer exist on disk (what `index --prune` removes)."""
        return [Path(root) for root in self.kb.roots() if not os.path.exists(root)]

    def _index_root(
        self, root: Path, resolver: AclResolver, all_roots: list[Path], report: IndexReport, on_progress
    ) -> None:
        previous = self.kb.files_within(str(root))
        found = list(scan(root, all_roots))
        seen: set[str] = set()
        max_bytes = int(self.settings.max_file_mb * 1024 * 1024)
        for done, item in enumerate(found, start=1):
            if on_progress:
                on_progress(done, len(found), item.display)
            source = str(item.path)
            seen.add(source)
            old = previous.get(source)
            if item.skip_reason:  # a file turned into a link that may not be followed: drop what it was
                self._skip(item.display, item.skip_reason, old, report)
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
            self._index_file(item, root, resolver, stat, old, report)
        for source, record in previous.items():
            # a file another (nested) root indexed and this walk does not reach (e.g. a hidden folder) stays
            if source not in seen and (record.root == str(root) or not os.path.lexists(source)):
                self._remove(record, report)
                report.deleted.append(record.path)

    def _remove(self, record: FileRecord, report: IndexReport) -> None:
        report.chunks_removed += self.kb.delete_file(record.source)

    def _skip(self, display: str, reason: str, old: FileRecord | None, report: IndexReport) -> None:
        """Skip a file whose ACL or target cannot be trusted; an earlier indexed version goes too."""
        if old is not None:
            self._remove(old, report)
            reason += "; its indexed version was removed"
        report.skipped.append((display, reason))

    def _index_file(
        self, item: FoundFile, root: Path, resolver: AclResolver, stat, old: FileRecord | None, report: IndexReport
    ) -> None:
        twin = self.kb.other_file_at(item.display, str(item.path))
        if twin is not None:
            if os.path.lexists(twin.source):
                self._skip(
                    item.display,
                    f"its citation path is already used by {twin.source} (an indexed folder "
                    "of the same name); index this folder into another knowledge base (--kb)",
                    old,
                    report,
                )
                return
            self._remove(twin, report)  # that file is gone (its folder moved): this one takes its place
        try:
            sources = resolver.for_file(item.path)
        except AclError as exc:
            self._skip(item.display, str(exc), old, report)
            return
        inherited = combine(sources)
        real_path = os.path.realpath(item.path)
        # a record written before these ACL rules (no real_path) is always re-derived
        same_place = old is not None and old.real_path == real_path and old.inherited_acl == inherited
        if same_place and old is not None and old.size == stat.st_size and old.mtime == stat.st_mtime:
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
        except AclError as exc:
            self._skip(item.display, str(exc), old, report)
            return
        except LoaderError as exc:
            kept = "; previous version kept" if old else ""
            report.skipped.append((item.display, f"{exc}{kept}"))
            return
        except Exception as exc:  # a third-party parser blew up: skip this file, never the run
            report.skipped.append((item.display, f"parser error: {type(exc).__name__}: {exc}"[:300]))
            return
        if (
            same_place and old is not None and old.file_hash == file_hash
        ):  # front matter and record ACLs are in the hash
            self.kb.touch_file(str(item.path), stat.st_size, stat.st_mtime)
            report.unchanged += 1
            return
        chunks, doc_acls, derivation = [], [], [s.as_dict() for s in sources]
        for doc in docs:
            report.skipped += [(f"{item.display}#{key}", reason) for key, reason in doc.skipped_records]
            doc_id = f"{item.display}#{doc.key}" if doc.key else item.display
            if doc.error:
                report.skipped.append((doc_id, doc.error))
                continue
            doc_sources = (
                sources
                if doc.acl is None
                else [*sources, AclSource("record" if doc.key else "front matter", doc_id, frozenset(doc.acl))]
            )
            doc_acl = combine(doc_sources)
            if doc.acl is not None and doc_acl == [NOBODY] and all(s.groups for s in doc_sources):
                report.warnings.append(
                    (
                        doc_id,
                        "no group is named by every ACL source (a file ACL can only "
                        "narrow its folder's): readable by no one until that is fixed",
                    )
                )
            if doc.acl is not None and not doc.key:
                derivation.append(doc_sources[-1].as_dict())
            doc_acls.append(doc_acl)
            chunks.extend(
                chunk_document(
                    doc,
                    kb=self.kb.name,
                    doc_id=doc_id,
                    source=str(item.path),
                    path=item.display,
                    acl=doc_acl,
                    updated_at=stat.st_mtime,
                    max_chars=self.settings.chunk_max_chars,
                    overlap_chars=self.settings.chunk_overlap_chars,
                )
            )
        if not chunks:
            self._skip(item.display, "no text content", old, report)
            return
        record = FileRecord(
            source=str(item.path),
            root=str(root),
            path=item.display,
            size=stat.st_size,
            mtime=stat.st_mtime,
            file_hash=file_hash,
            acl=_file_acl(doc_acls),
            n_chunks=len(chunks),
            inherited_acl=inherited,
            real_path=real_path,
            acl_sources=derivation,
        )
        removed, added = self.kb.replace_file(record, chunks)
        report.chunks_removed += removed
        report.chunks_added += added
        (report.updated if old else report.added).append(item.display)


def _file_acl(doc_acls: list[list[str]]) -> list[str]:
    """Who may read the whole file (grep, read_file): its documents' common ACL, else only the owner."""
    if doc_acls and all(acl == doc_acls[0] for acl in doc_acls):
        return doc_acls[0]
    return [NOBODY]  # documents disagree: only an unrestricted caller may read the raw file
