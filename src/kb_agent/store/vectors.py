"""Dense vector stores. Callers see only `VectorStore`; the ACL filter is part of every query.

`FaissFlatStore` is the embedded default: exact inner-product search (faiss) restricted by a bitmap
of the positions the caller may see, built from per-group masks. Exact search keeps recall at 1.0
under any filter, which approximate indexes lose at low filter selectivity.
"""

from __future__ import annotations

import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np

from kb_agent.governance.access import AccessFilter
from kb_agent.store.base import TAIL_MARGIN, VectorIndex, chunk_of

# numpy reads each .npy header with `ast.literal_eval`, and CPython 3.11's AST constructor is not safe across
# threads: two searchers loading the store at once raised "SystemError: AST constructor recursion depth
# mismatch" under load (tests/test_faults_store.py). Loads take turns; they are rare (a new catalog state).
_LOADING = threading.Lock()


class VectorStore(VectorIndex, Protocol):
    dim: int | None

    def upsert(self, ids: np.ndarray, vectors: np.ndarray, acls: list[list[str]]) -> None: ...

    def delete(self, ids: np.ndarray) -> None: ...

    def ids(self) -> np.ndarray: ...

    def search(self, query: np.ndarray, k: int, access: AccessFilter) -> list[tuple[int, float]]: ...

    stamp: str
    damaged: str | None

    def save(self, stamp: str = "") -> None: ...


class FaissFlatStore:
    def __init__(self, folder: Path, *, load: bool = True):
        """`load=False`: ignore what is on disk (the store is about to be rebuilt and saved over it)."""
        self.folder = folder
        self.dim: int | None = None
        self._ids = np.zeros(0, dtype=np.int64)
        self._vecs = np.zeros((0, 0), dtype=np.float32)
        self._acls: list[list[str]] = []
        self._index: faiss.IndexFlatIP | None = None
        self._group_masks: dict[str, np.ndarray] = {}
        self._public_mask = np.zeros(0, dtype=bool)
        self.stamp = ""  # the catalog state the saved vectors reflect ("" = none saved)
        self.damaged: str | None = None  # why the saved file could not be used
        if load:
            self._load()

    # -- persistence --------------------------------------------------------------------------------
    # One file, replaced atomically: ids, vectors, ACLs and the stamp of the catalog state they reflect
    # can never come from two different saves. The zip members carry CRCs: a flipped bit or a truncated
    # file fails to load (`damaged` says why) instead of giving silently wrong results.
    FILE = "store.npz"

    def _load(self) -> None:
        path = self.folder / self.FILE
        if not path.exists():
            return
        try:
            with _LOADING, np.load(path, allow_pickle=False) as data:
                ids, vecs = data["ids"], data["vectors"]
                acls = json.loads(bytes(data["acl"]).decode("utf-8"))
                stamp = bytes(data["stamp"]).decode("utf-8")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            self.damaged = f"{path} cannot be read ({type(exc).__name__}: {str(exc)[:120]})"
            return
        if not (len(ids) == len(vecs) == len(acls)) or (len(vecs) and vecs.ndim != 2):
            self.damaged = f"{path} is inconsistent ({len(ids)} ids, {len(vecs)} vectors, {len(acls)} ACLs)"
            return
        self._set(ids, vecs, acls)
        self.stamp = stamp

    def save(self, stamp: str = "") -> None:
        """Write the store under a name no other writer uses, then rename it into place (atomic)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / self.FILE
        tmp = self.folder / f".{self.FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as handle:
                np.savez(
                    handle,
                    ids=self._ids,
                    vectors=self._vecs,
                    acl=np.frombuffer(json.dumps(self._acls).encode("utf-8"), dtype=np.uint8),
                    stamp=np.frombuffer(stamp.encode("utf-8"), dtype=np.uint8),
                )
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        self.stamp, self.damaged = stamp, None

    # -- mutation -----------------------------------------------------------------------------------
    def _set(self, ids: np.ndarray, vecs: np.ndarray, acls: list[list[str]]) -> None:
        self._ids = ids.astype(np.int64)
        self._vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        self._acls = acls
        self.dim = self._vecs.shape[1] if len(self._vecs) else self.dim
        self._index = None
        if self.dim:
            self._index = faiss.IndexFlatIP(self.dim)
            if len(self._vecs):
                self._index.add(self._vecs)
        self._group_masks = {}
        for pos, acl in enumerate(acls):
            for group in acl:
                mask = self._group_masks.get(group)
                if mask is None:
                    mask = self._group_masks[group] = np.zeros(len(acls), dtype=bool)
                mask[pos] = True
        self._public_mask = np.array([not acl for acl in acls], dtype=bool)

    def upsert(self, ids: np.ndarray, vectors: np.ndarray, acls: list[list[str]]) -> None:
        if len(ids) == 0:
            return
        if self.dim is not None and vectors.shape[1] != self.dim:
            raise ValueError(f"vector dimension {vectors.shape[1]} does not match the store's {self.dim}")
        keep = ~np.isin(self._ids, ids)
        if keep.all() and self._index is not None:  # pure append: no rebuild
            self._append(ids, vectors, acls)
            return
        old_acls = [acl for acl, k in zip(self._acls, keep, strict=True) if k]
        base = self._vecs[keep] if len(self._vecs) else np.zeros((0, vectors.shape[1]), np.float32)
        self._set(np.concatenate([self._ids[keep], ids]), np.vstack([base, vectors]), old_acls + list(acls))

    def _append(self, ids: np.ndarray, vectors: np.ndarray, acls: list[list[str]]) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        start, n = len(self._ids), len(ids)
        self._ids = np.concatenate([self._ids, ids.astype(np.int64)])
        self._vecs = np.vstack([self._vecs, vectors]) if start else vectors
        self._acls = self._acls + list(acls)
        assert self._index is not None  # _set() built it before the first append
        self._index.add(vectors)
        grow = np.zeros(n, dtype=bool)
        self._group_masks = {g: np.concatenate([m, grow]) for g, m in self._group_masks.items()}
        for offset, acl in enumerate(acls):
            for group in acl:
                if group not in self._group_masks:
                    self._group_masks[group] = np.zeros(start + n, dtype=bool)
                self._group_masks[group][start + offset] = True
        self._public_mask = np.concatenate([self._public_mask, np.array([not a for a in acls], dtype=bool)])

    def delete(self, ids: np.ndarray) -> None:
        keep = ~np.isin(self._ids, ids)
        if keep.all():
            return
        self._set(self._ids[keep], self._vecs[keep], [a for a, k in zip(self._acls, keep, strict=True) if k])

    def ids(self) -> np.ndarray:
        return self._ids

    def __len__(self) -> int:
        """Chunks with a vector (a chunk's tail vector is not another chunk)."""
        return int((self._ids >= 0).sum())

    # -- query --------------------------------------------------------------------------------------
    def _allowed_mask(self, access: AccessFilter) -> np.ndarray | None:
        if not access.restricted:
            return None
        mask = self._public_mask.copy()
        for group in access.groups or ():
            group_mask = self._group_masks.get(group)
            if group_mask is not None:
                mask |= group_mask
        return mask

    def search(self, query: np.ndarray, k: int, access: AccessFilter) -> list[tuple[int, float]]:
        if self._index is None or not len(self._ids):
            return []
        query = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        mask = self._allowed_mask(access)
        params = None
        if mask is not None:
            allowed = int(mask.sum())
            if allowed == 0:
                return []
            k = min(k, allowed)
            bitmap = np.packbits(mask, bitorder="little")
            params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bitmap)))  # type: ignore[call-arg]
        # a chunk may hold two vectors (its head, and its tail under a negative id): fetch twice k, keep each
        # chunk's best (a tail less TAIL_MARGIN)
        fetch = min(2 * k, len(self._ids))
        scores, positions = self._index.search(query, fetch, params=params)
        best: dict[int, float] = {}
        for score, pos in zip(scores[0], positions[0], strict=True):
            if pos >= 0:
                vid = int(self._ids[pos])
                chunk = chunk_of(vid)
                score = float(score) - (TAIL_MARGIN if vid < 0 else 0.0)
                if score > best.get(chunk, -np.inf):
                    best[chunk] = score
        return sorted(best.items(), key=lambda r: -r[1])[:k]
