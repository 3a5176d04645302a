import numpy as np
import pytest

from kb_agent.governance.access import AccessFilter
from kb_agent.store.vectors import FaissFlatStore


def _data(n=3000, dim=32, seed=0):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    groups = [f"g{i}" for i in range(20)]
    acls = [[] if i % 10 == 0 else [groups[i % 20], groups[(i * 7) % 20]] for i in range(n)]
    return np.arange(1, n + 1, dtype=np.int64), vecs, acls


def test_filtered_search_equals_brute_force(tmp_path):
    ids, vecs, acls = _data()
    store = FaissFlatStore(tmp_path)
    store.upsert(ids, vecs, acls)
    rng = np.random.default_rng(1)
    access = AccessFilter.for_groups(["g3", "g11"])
    allowed = np.array([access.allows(a) for a in acls])
    for _ in range(20):
        q = rng.normal(size=32).astype(np.float32)
        q /= np.linalg.norm(q)
        got = [i for i, _ in store.search(q, 10, access)]
        scores = vecs @ q
        scores[~allowed] = -np.inf
        expected = ids[np.argsort(-scores)[:10]].tolist()
        assert got == expected


def test_no_allowed_vectors_returns_nothing(tmp_path):
    store = FaissFlatStore(tmp_path)
    store.upsert(np.array([1, 2]), np.eye(2, dtype=np.float32), [["a"], ["b"]])
    assert store.search(np.array([1, 0], np.float32), 5, AccessFilter.for_groups(["c"])) == []
    assert [i for i, _ in store.search(np.array([1, 0], np.float32), 5, AccessFilter.for_groups(["b"]))] == [2]


def test_persistence_delete_and_upsert(tmp_path):
    ids, vecs, acls = _data(n=200)
    store = FaissFlatStore(tmp_path)
    store.upsert(ids[:100], vecs[:100], acls[:100])
    store.upsert(ids[100:], vecs[100:], acls[100:])  # append path
    store.delete(ids[:50])
    store.upsert(ids[60:70], vecs[60:70], [["x"]] * 10)  # replace path, new ACL
    store.save()
    again = FaissFlatStore(tmp_path)
    assert sorted(again.ids().tolist()) == list(range(51, 201))
    top = again.search(vecs[65], 1, AccessFilter.for_groups(["x"]))
    assert top[0][0] == 66
    assert 66 not in [i for i, _ in again.search(vecs[65], 200, AccessFilter.for_groups(["g5"]))]


@pytest.mark.parametrize("tail_acl", [["hr"], []], ids=["tail_keeps_the_chunks_acl", "control_public_tail_leaks"])
def test_a_chunk_is_returned_once_scored_by_its_head_or_its_tail_less_the_margin(tmp_path, tail_acl):
    from kb_agent.store.base import TAIL_MARGIN, tail_id

    def unit(*xs):
        v = np.array(xs, dtype=np.float32)
        return v / np.linalg.norm(v)

    query = unit(1, 0, 0)
    head, near_tail, far_tail = unit(0.6, 0.8, 0), unit(0.61, 0.79, 0), unit(0.95, 0.31, 0)
    store = FaissFlatStore(tmp_path)
    store.upsert(
        np.array([1, tail_id(1), 2, tail_id(2)], dtype=np.int64),
        np.vstack([head, near_tail, head, far_tail]),
        [[], [], ["hr"], tail_acl],
    )
    found = dict(store.search(query, 10, AccessFilter.for_groups(["hr"])))
    assert set(found) == {1, 2} and len(store) == 2  # chunk ids, each once; tails are not chunks
    assert abs(found[1] - float(head @ query)) < 1e-6  # a tail barely above its head does not count
    assert abs(found[2] - (float(far_tail @ query) - TAIL_MARGIN)) < 1e-6
    # the stores give a tail its chunk's ACL (kb._sync_vectors, pgvector sync_tails); a public one leaks the chunk
    leaked = dict(store.search(query, 10, AccessFilter.for_groups([]))).keys() == {1, 2}
    assert leaked is (tail_acl == [])
