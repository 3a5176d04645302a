"""What every store backend offers the layers above it: the knowledge-base protocol and its parts.

Two backends implement it: the embedded default (`store/kb.py`: SQLite catalog + tantivy + faiss in the
data folder) and PostgreSQL + pgvector (`store/postgres/`). Retrieval, tools, ingest jobs and the engine
see only these protocols; `store/backends.py` picks the implementation from `KB_AGENT_STORE`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kb_agent.config import Settings
from kb_agent.governance.access import AccessFilter
from kb_agent.governance.errors import Conflict, NotFound
from kb_agent.store.bilingual import LEXICON_META, Lexicon
from kb_agent.store.catalog import FileRecord, StoredChunk
from kb_agent.store.embedding_cache import embed_key
from kb_agent.store.graph import KnowledgeGraph
from kb_agent.store.records import Chunk

_KB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
FUSION_META = "fusion_weights"
log = logging.getLogger("kb_agent.store")


class KBError(ValueError):
    pass


class KBNotFound(KBError, NotFound):
    pass


class KBBusy(KBError, Conflict):
    pass


def validate_kb_name(name: str) -> str:
    if not _KB_NAME.match(name or ""):
        raise KBError(f"invalid knowledge-base name {name!r}: use letters, digits, '.', '_' or '-'")
    return name


def _context(chunk: Chunk) -> str:
    return " > ".join(p for p in [chunk.title, *chunk.heading_path] if p)


def embedding_text(chunk: Chunk, max_chars: int) -> str:
    """The passage the embedder sees: document title and section path give the chunk its context."""
    head = _context(chunk)
    text = f"{head}\n{chunk.text}" if head and head not in chunk.text[: len(head) + 20] else chunk.text
    return text[:max_chars]


# A chunk's end that the head passage leaves out by fewer characters than this is not worth a second vector.
TAIL_MIN_CHARS = 200


def tail_text(chunk: Chunk, max_chars: int) -> str | None:
    """The second passage of a chunk longer than the embedder's window: its last lines, with the same title
    and section context. Without it, what a long chunk says past its first `max_chars` characters (a list under
    a code block, an answer at the end of a section) is invisible to dense search. None: the head covers it."""
    head = _context(chunk)
    prefix = f"{head}\n" if head else ""
    if len(embedding_text(chunk, 10**9)) <= max_chars + TAIL_MIN_CHARS:
        return None
    budget = max(max_chars - len(prefix), max_chars // 2)
    tail = chunk.text[-budget:]
    line = tail.find("\n")
    if 0 <= line < budget // 4:  # start on a line of its own, not mid-word
        tail = tail[line + 1 :]
    return (prefix + tail)[:max_chars]


# A tail vector lacks its section's opening lines; it ranks its chunk only when it beats the head by this much
# (cosine). Over the twenty answer sets without a model: no margin +4 / -5 verdicts, 0.02 +1 / -0 (dev19 t1907).
TAIL_MARGIN = 0.02


def tail_id(row_id: int) -> int:
    """The vector id of a chunk's tail passage (negative: chunk row ids are positive)."""
    return -row_id - 1


def chunk_of(vector_id: int) -> int:
    """The chunk a vector id belongs to: itself, or the chunk of a tail passage."""
    return vector_id if vector_id >= 0 else -vector_id - 1


@dataclass(frozen=True)
class FusionWeights:
    """A knowledge base's own multipliers of the configured RRF weights (`kb-agent eval fusion --save`
    measures them on questions about it); `measured` says on what, for whoever reads them later."""

    bm25: float = 1.0
    dense: float = 1.0
    measured: str = ""

    def as_meta(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_meta(cls, raw: str | None) -> FusionWeights | None:
        """None when unset; a damaged value is ignored (the configured weights rank as before) and logged."""
        if not raw:
            return None
        try:
            data = json.loads(raw)
            weights = cls(float(data["bm25"]), float(data["dense"]), str(data.get("measured", "")))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring the stored fusion weights %r: %s", raw[:200], exc)
            return None
        # both above 0: a side left out would leave hybrid search empty whenever the other is unavailable
        if not all(math.isfinite(v) and v > 0 for v in (weights.bm25, weights.dense)):
            log.warning("ignoring the stored fusion weights %r: each must be a number above 0", raw[:200])
            return None
        return weights


@dataclass
class EmbedProgress:
    total: int
    embedded: int

    @property
    def coverage(self) -> float:
        return 1.0 if self.total == 0 else self.embedded / self.total


def model_key(model_id: str) -> str:
    """A short, stable name for an embedding model (dense folder, vector rows, HNSW index)."""
    return hashlib.sha256(model_id.encode()).hexdigest()[:16]


class SharedParts:
    """What both backends do alike: the write API's delegations to the catalog, and the graph file.

    A backend sets `catalog`, `cache`, `settings`, `folder`, `_writing` and `_graph`, and implements `delete_file`."""

    catalog: Any
    cache: Any
    settings: Settings
    folder: Path
    _writing: bool
    _graph: KnowledgeGraph | None

    def graph(self) -> KnowledgeGraph:
        """The knowledge graph as the last index run left it (the ingest graph job writes it, readers never do)."""
        if self._graph is None:
            self._graph = self._new_graph()
        else:
            self._graph.reload_if_changed()
        return self._graph

    def _new_graph(self) -> KnowledgeGraph:
        return KnowledgeGraph(self.folder)

    @property
    def writing_now(self) -> bool:
        """Inside an index run (a search then stays on the writer's thread, which sees the run's own rows)."""
        return self._writing

    def _must_be_writing(self) -> None:
        if not self._writing:
            raise RuntimeError("knowledge-base writes happen inside `with kb.writing():` (one atomic run)")

    def delete_file(self, source: str) -> int:
        raise NotImplementedError

    def touch_file(self, source: str, size: int, mtime: float) -> None:
        """Same content, new size/mtime: remember them so the next run does not read the file again."""
        self._must_be_writing()
        self.catalog.touch_file(source, size, mtime)

    def set_root(self, root: str, acl: list[str]) -> None:
        self._must_be_writing()
        self.catalog.set_root(root, acl, time.time())

    def remove_root(self, root: str) -> tuple[list[str], int]:
        """Forget an indexed root: every file it indexed and their chunks; (citation paths, chunks removed)."""
        self._must_be_writing()
        files = self.catalog.files_under(root)
        chunks = sum(self.delete_file(source) for source in files)
        self.catalog.delete_root(root)
        return sorted(f.path for f in files.values()), chunks

    def roots(self) -> dict[str, list[str]]:
        """Indexed root folder -> its --acl groups."""
        return self.catalog.roots()

    def fusion_weights(self) -> FusionWeights | None:
        """The weights `kb-agent eval fusion --save` measured for this knowledge base (None: the configured)."""
        return FusionWeights.from_meta(self.catalog.get_meta(FUSION_META))

    def set_fusion_weights(self, weights: FusionWeights | None) -> None:
        """Store (None: forget) this knowledge base's fusion weights."""
        self._must_be_writing()
        self.catalog.set_meta(FUSION_META, weights.as_meta() if weights else "")

    def bilingual_lexicon(self) -> Lexicon | None:
        """The Chinese -> English lexicon the last index run learned (None: never learned, or damaged)."""
        return Lexicon.from_meta(self.catalog.get_meta(LEXICON_META))

    def store_bilingual_lexicon(self, lexicon: Lexicon) -> None:
        """Written by the ingest lexicon job after an index run (a derived entry, like the graph)."""
        self.catalog.set_meta(LEXICON_META, lexicon.as_meta())

    def files_within(self, root: str) -> dict[str, FileRecord]:
        """source -> record of every indexed file under `root`."""
        return self.catalog.files_within(root)

    def other_file_at(self, path: str, source: str) -> FileRecord | None:
        """Another indexed file that already uses citation path `path`."""
        return self.catalog.other_file_at(path, source)

    def embed_key_for(self, chunk: Chunk) -> str:
        return embed_key(embedding_text(chunk, self.settings.embed_max_chars))

    def embedding_texts(self, rows: dict[str, int]) -> dict[str, str]:
        """Embedding key -> the passage the embedder sees (a chunk's head or its tail), for the rows still in
        the catalog."""
        chunks = self.catalog.get_chunks(rows.values())
        out = {}
        for key, row_id in rows.items():
            if row_id not in chunks:
                continue
            for text in (
                embedding_text(chunks[row_id].chunk, self.settings.embed_max_chars),
                tail_text(chunks[row_id].chunk, self.settings.embed_max_chars),
            ):
                if text is not None and embed_key(text) == key:
                    out[key] = text
                    break
        return out

    def tail_keys(self) -> dict[int, str]:
        """Chunk row id -> embedding key of its tail passage, for every chunk long enough to have one
        (none when `KB_AGENT_EMBED_TAILS` is off)."""
        if not self.settings.embed_tails:
            return {}
        max_chars = self.settings.embed_max_chars
        # a generous pre-filter in the catalog (a long title and section path shorten the head); tail_text decides
        chunks = self.catalog.get_chunks(self.catalog.long_chunk_ids(max(0, max_chars + TAIL_MIN_CHARS - 400)))
        texts = {row_id: tail_text(stored.chunk, max_chars) for row_id, stored in chunks.items()}
        return {row_id: embed_key(text) for row_id, text in sorted(texts.items()) if text is not None}

    def _then_tails(self, heads: dict[str, int]) -> dict[str, int]:
        """`unembedded`'s answer: the heads still to embed (key -> row id), then the tails not cached yet, so
        dense search covers every chunk before any chunk's second passage."""
        tails = {key: row_id for row_id, key in self.tail_keys().items()}
        return heads | {key: tails[key] for key in self.cache.missing(tails) if key not in heads}


class CatalogReader(Protocol):
    """The file manifest and chunk table, as readers above the store use them."""

    @property
    def generation(self) -> int: ...

    def roots(self) -> dict[str, list[str]]: ...

    def file(self, source: str) -> FileRecord | None: ...

    def file_by_path(self, path: str) -> FileRecord | None: ...

    def find_files(self, fragment: str, limit: int) -> list[FileRecord]: ...

    def all_files(self) -> list[FileRecord]: ...

    def visible_files(self, access: AccessFilter) -> list[FileRecord]: ...

    def count_files(self) -> int: ...

    def count_chunks(self) -> int: ...

    def get_chunks(self, ids: Iterable[int]) -> dict[int, StoredChunk]: ...

    def long_chunk_ids(self, min_chars: int) -> list[int]: ...

    def iter_chunks(self, batch: int = 2000) -> Iterator[StoredChunk]: ...

    def chunks_of_source(self, source: str) -> list[StoredChunk]: ...

    def chunks_in_lines(self, source: str, first: int, last: int) -> list[StoredChunk]: ...

    def doc_leads(self) -> list[tuple[str, str, int, str]]: ...


class KeywordIndex(Protocol):
    """BM25 over the analysed terms of every chunk; the ACL filter is part of each query."""

    def search(self, query: str, k: int, access: AccessFilter) -> list[tuple[int, float]]: ...

    def rarest_term_chunks(self, text: str) -> tuple[int, int]: ...

    def doc_freqs(self, terms: list[str]) -> tuple[dict[str, int], int]: ...

    def held_terms(self, terms: list[str], access: AccessFilter) -> set[str]: ...

    def num_docs(self) -> int: ...


class VectorIndex(Protocol):
    """Dense vectors of one embedding model; the ACL filter is part of each query."""

    def search(self, query: np.ndarray, k: int, access: AccessFilter) -> list[tuple[int, float]]: ...

    def __len__(self) -> int: ...


class KnowledgeBase(Protocol):
    """One knowledge base, whichever engine holds it.

    Writes happen only inside `writing()` (one atomic run); readers call `refresh()` to see what other
    processes committed."""

    name: str
    settings: Settings
    model_id: str
    folder: Path  # local working folder: process files (embed.pid/log), the knowledge graph

    @property
    def catalog(self) -> CatalogReader: ...

    @property
    def lexical(self) -> KeywordIndex: ...

    @property
    def vectors(self) -> VectorIndex: ...

    def graph(self) -> KnowledgeGraph: ...

    def close(self) -> None: ...

    def refresh(self) -> None: ...

    def chunk_count(self) -> int: ...

    def lexical_problem(self) -> str | None: ...

    def _new_graph(self) -> KnowledgeGraph:
        return KnowledgeGraph(self.folder)

    @property
    def writing_now(self) -> bool: ...

    # -- the write API --
    def writing(self) -> AbstractContextManager[None]: ...

    def replace_file(self, record: FileRecord, chunks: list[Chunk]) -> tuple[int, int]: ...

    def delete_file(self, source: str) -> int: ...

    def touch_file(self, source: str, size: int, mtime: float) -> None: ...

    def set_root(self, root: str, acl: list[str]) -> None: ...

    def remove_root(self, root: str) -> tuple[list[str], int]: ...

    def roots(self) -> dict[str, list[str]]: ...

    def fusion_weights(self) -> FusionWeights | None: ...

    def set_fusion_weights(self, weights: FusionWeights | None) -> None: ...

    def bilingual_lexicon(self) -> Lexicon | None: ...

    def store_bilingual_lexicon(self, lexicon: Lexicon) -> None: ...

    def files_within(self, root: str) -> dict[str, FileRecord]: ...

    def other_file_at(self, path: str, source: str) -> FileRecord | None: ...

    def repair_stores(self) -> list[str]: ...

    # -- embedding --
    def sync_vectors(self, force: bool = False, *, save: bool = True) -> None: ...

    def embed_progress(self) -> EmbedProgress: ...

    def unembedded(self) -> dict[str, int]: ...

    def embedding_texts(self, rows: dict[str, int]) -> dict[str, str]: ...

    def add_vectors(self, vectors: dict[str, np.ndarray]) -> None: ...
