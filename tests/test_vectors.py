import numpy as np

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
