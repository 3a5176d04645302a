"""One knowledge base on disk: catalog (truth) + lexical index + dense store + shared embedding cache.

Crash safety: a writer marks the KB `lexical_dirty` before touching tantivy and clears it in the same
SQLite transaction that records the new chunks, which commits only after tantivy has. Killed before
tantivy's commit, neither store changed; killed between the two commits, the next writer sees the flag
and rebuilds the lexical index from the catalog, which still holds the previous run.
"""

from __future__ import annotations

import fcntl
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from kb_agent.config import Settings
from kb_agent.governance.errors import StoreDamaged
from kb_agent.llm.embeddings import embedder_model_id
from kb_agent.store.base import EmbedProgress, KBBusy, SharedParts, model_key, tail_id, validate_kb_name
from kb_agent.store.catalog import Catalog, FileRecord
from kb_agent.store.embedding_cache import EmbeddingCache
from kb_agent.store.graph import KnowledgeGraph
from kb_agent.store.lexical import LexicalIndex, LexicalIndexDamaged
from kb_agent.store.records import Chunk
from kb_agent.store.vectors import FaissFlatStore

log = logging.getLogger("kb_agent.store")


class EmbeddedKnowledgeBase(SharedParts):
    """The embedded default: everything in the data folder, no server."""

    def __init__(self, name: str, settings: Settings, *, cache_folder: Path | None = None, model_id: str | None = None):
        self.name = validate_kb_name(name)
        self.settings = settings
        self.folder = settings.kbs_folder / name
        self.catalog = Catalog(self.folder / "catalog.sqlite", name)
        self.lexical_damaged: str | None = None
        try:
            self.lexical = LexicalIndex(self.folder / "lexical")
        except LexicalIndexDamaged as exc:  # readers run on an empty stand-in and say so; a writer rebuilds
            log.warning("%s; `kb-agent repair --kb %s` rebuilds it", exc, name)
            self.lexical_damaged = str(exc)
            self.lexical = LexicalIndex(self.folder / "lexical", on_disk=False)
        self.model_id = model_id or embedder_model_id(settings)
        self.cache = EmbeddingCache((cache_folder or settings.cache_folder) / "embeddings", self.model_id)
        self.vectors = FaissFlatStore(self._dense_folder())
        self._vector_gen = self.vectors.stamp
        self._count_cache: tuple[int, int] = (-1, 0)
        self._graph: KnowledgeGraph | None = None
        self._writing = False
        self._vectors_lock = threading.RLock()  # server threads share this object: one sync at a time

    @staticmethod
    def exists(name: str, settings: Settings) -> bool:
        return (settings.kbs_folder / name / "catalog.sqlite").exists()

    @staticmethod
    def list_names(settings: Settings) -> list[str]:
        if not settings.kbs_folder.exists():
            return []
        return sorted(p.name for p in settings.kbs_folder.iterdir() if (p / "catalog.sqlite").exists())

    def close(self) -> None:
        self.lexical.rollback()
        self.catalog.close()
        self.cache.close()

    # -- the write API: the indexer's only way in -------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        """One atomic index run: catalog changes commit only after tantivy has committed the same ones.

        Inside it, `replace_file` / `delete_file` / `touch_file` / `set_root` change the KB; outside, they raise."""
        lock_path = self.folder / ".write.lock"
        with open(lock_path, "w") as lock_file:
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise KBBusy(f"another process is writing to knowledge base {self.name!r}") from exc
            self.lexical.index.reload()  # what other writers committed, before judging it
            if self.catalog.get_meta("lexical_dirty") == "1" or self.lexical_problem():
                self.rebuild_lexical()  # an earlier writer died mid-commit, or the folder was damaged or lost
            self.catalog.set_meta("lexical_dirty", "1")
            lexical_committed = False
            self._writing = True
            try:
                with self.catalog.transaction():
                    yield
                    self.lexical.commit()
                    lexical_committed = True
                    self.catalog.set_meta("lexical_dirty", "0")
                    self.catalog.bump_generation()
            except BaseException:
                if not lexical_committed:  # nothing reached disk: both stores hold the previous run
                    self.lexical.rollback()
                    self.catalog.set_meta("lexical_dirty", "0")
                raise
            finally:
                self._writing = False
        self.sync_vectors()

    def replace_file(self, record: FileRecord, chunks: list[Chunk]) -> tuple[int, int]:
        """Put one file's chunks in place of its previous ones (catalog + lexical); (removed, added) counts."""
        self._must_be_writing()
        keys = [self.embed_key_for(chunk) for chunk in chunks]
        removed, added = self.catalog.replace_file(record, chunks, keys, time.time())
        if removed:
            self.lexical.delete_source(record.source)
        self.lexical.add(added)
        return len(removed), len(added)

    def delete_file(self, source: str) -> int:
        """Remove one file and its chunks; how many chunks went."""
        self._must_be_writing()
        removed = self.catalog.delete_file(source)
        self.lexical.delete_source(source)
        return len(removed)

    def lexical_problem(self) -> str | None:
        """Why keyword search cannot be trusted right now (None: it holds exactly the catalog's chunks)."""
        if self.lexical_damaged:
            return self.lexical_damaged
        indexed, chunks = self.lexical.num_docs(), self.chunk_count()
        if indexed != chunks:
            return f"the keyword index holds {indexed} chunks, the catalog {chunks} (an interrupted or lost index)"
        return None

    def rebuild_lexical(self) -> None:
        """Refill the keyword index from the catalog (the source of truth); a damaged folder is recreated."""
        if self.lexical_damaged or not (self.folder / "lexical" / "meta.json").exists():
            self.lexical = LexicalIndex.recreate(self.folder / "lexical")
            self.lexical_damaged = None
        self.lexical.clear()
        batch: list[tuple[int, Chunk]] = []
        for stored in self.catalog.iter_chunks():
            batch.append((stored.id, stored.chunk))
            if len(batch) >= 5000:
                self.lexical.add(batch)
                batch = []
        self.lexical.add(batch)
        self.lexical.commit()

    # -- dense ------------------------------------------------------------------------------------
    def _dense_folder(self) -> Path:
        """One dense store per embedding model: switching models never mixes (or discards) vectors."""
        return self.folder / "dense" / model_key(self.model_id)

    def _vector_stamp(self) -> str:
        tails = "+tails" if self.settings.embed_tails else ""  # switching tails on or off re-syncs the store
        return f"{self.catalog.generation}:{self.catalog.get_meta('embed_generation', '0')}:{self.model_id}{tails}"

    def sync_vectors(self, force: bool = False, *, save: bool = True) -> None:
        """Make the dense store hold exactly the catalog chunks whose vectors are cached (for this model).

        Writers (an index run, the embedding job) save it; a reader (`save=False`) only fixes its own copy
        in memory, so searching processes never write store files."""
        with self._vectors_lock:
            self._sync_vectors(force, save)

    def _sync_vectors(self, force: bool, save: bool) -> None:
        stamp = self._vector_stamp()
        if not force and stamp == self._vector_gen:
            return
        rows = self.catalog.embed_keys()
        acls = {row_id: acl for row_id, _, acl in rows}
        tails = {row_id: key for row_id, key in self.tail_keys().items() if row_id in acls}
        present = set(self.vectors.ids().tolist())
        wanted = set(acls) | {tail_id(row_id) for row_id in tails}
        stale = np.array(sorted(present - wanted), dtype=np.int64)
        if len(stale):
            self.vectors.delete(stale)
        todo = [(row_id, key, acl) for row_id, key, acl in rows if row_id not in present]
        todo += [(tail_id(r), key, acls[r]) for r, key in tails.items() if tail_id(r) not in present]
        for start in range(0, len(todo), 20000):
            part = todo[start : start + 20000]
            vecs = self.cache.get_many(key for _, key, _ in part)
            have = [(row_id, vecs[key], json.loads(acl)) for row_id, key, acl in part if key in vecs]
            if have:
                self.vectors.upsert(
                    np.array([h[0] for h in have], dtype=np.int64),
                    np.vstack([h[1] for h in have]),
                    [h[2] for h in have],
                )
        if save:
            self.vectors.save(stamp)
        self._vector_gen = stamp

    def chunk_count(self) -> int:
        """Number of chunks, cached per catalog generation (COUNT(*) is a full scan in SQLite)."""
        gen = self.catalog.generation
        if self._count_cache[0] != gen:
            self._count_cache = (gen, self.catalog.count_chunks())
        return self._count_cache[1]

    def refresh(self) -> None:
        """Pick up changes made by another process (indexer, embed worker); never writes."""
        stamp = self._vector_stamp()
        with self._vectors_lock:
            if stamp != self._vector_gen:
                self._reload_vectors(stamp)
        self.lexical.index.reload()

    def _reload_vectors(self, stamp: str) -> None:
        fresh = FaissFlatStore(self._dense_folder())
        if fresh.damaged:  # loads empty: rebuilt below from the catalog and the cache, in memory
            log.warning("%s; rebuilt from the embedding cache (the next index or embed run saves it)", fresh.damaged)
        self.vectors, self._vector_gen = fresh, fresh.stamp
        if fresh.stamp != stamp:
            self.sync_vectors(save=False)

    def repair_stores(self) -> list[str]:
        """Check every store file and rebuild what is derived from the catalog (inside `writing()`).

        The catalog is the source of truth: if it is damaged, nothing can be rebuilt from the other stores
        and the error says how to start again."""
        self._must_be_writing()
        done: list[str] = []
        problems = self.catalog.integrity_problems()
        if problems:
            raise StoreDamaged(
                f"{self.folder / 'catalog.sqlite'} is damaged ({problems[0]}); it is the source of truth: index "
                f"the sources again into a new knowledge base (`kb-agent index PATH --kb NEW`)"
            )
        done.append("catalog: integrity check ok")
        if problems := self.cache.integrity_problems():
            self.cache.reset()
            done.append(f"embedding cache was damaged ({problems[0]}): emptied; `kb-agent embed` fills it again")
        problem = self.lexical_problem()
        self.rebuild_lexical()
        done.append(f"keyword index rebuilt from the catalog ({self.chunk_count()} chunks)" + (
            f"; it was: {problem}" if problem else ""))  # fmt: skip
        damaged = self.vectors.damaged
        self.vectors = FaissFlatStore(self._dense_folder(), load=False)
        self._vector_gen = ""
        self.sync_vectors(save=True)
        done.append(f"dense store rebuilt from the embedding cache ({len(self.vectors.ids())} vectors)" + (
            f"; it was: {damaged}" if damaged else ""))  # fmt: skip
        (self.folder / "graph.json").unlink(missing_ok=True)
        self._graph = None
        done.append("knowledge graph: re-extracted after the run")
        return done

    def embed_progress(self) -> EmbedProgress:
        rows = self.catalog.embed_keys()
        missing = set(self.cache.missing(key for _, key, _ in rows))
        return EmbedProgress(total=len(rows), embedded=sum(1 for _, key, _ in rows if key not in missing))

    # -- vectors (written by the embedding job, kb_agent.ingest.embedding) ----------------------------
    def unembedded(self) -> dict[str, int]:
        """Embedding key -> chunk row id, for the passages whose vector is not cached yet: every chunk's head
        in catalog order, then the tails of long chunks (dense search covers every chunk first)."""
        heads = {key: row_id for row_id, key, _ in self.catalog.embed_keys()}
        return self._then_tails({key: heads[key] for key in self.cache.missing(heads)})

    def add_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        """Commit one batch to the shared cache; `sync_vectors` brings the dense store in step."""
        self.cache.put_many(vectors)
        self.catalog.bump("embed_generation")
