"""The native runtime keeps each system prompt's KV cache across calls of other roles (issue 12). The
llama.cpp context is faked: what is checked is which cache is saved, restored or dropped, and when."""

from __future__ import annotations

import numpy as np

from kb_agent.llm.kv_prefixes import MAX_PROMPTS, SystemPrefixStates


class FakeLow:
    """The low-level calls used: a sequence's KV cells out and in, as bytes naming the tokens they hold."""

    def __init__(self, llama):
        self.llama = llama
        self.fail_restore = False

    def llama_state_seq_get_size(self, ctx, seq):
        return 4 * self.llama.n_tokens

    def llama_state_seq_get_data(self, ctx, buffer, size, seq):
        data = np.asarray(self.llama.input_ids[: self.llama.n_tokens], dtype=np.int32).tobytes()
        buffer[: len(data)] = data
        return len(data)

    def llama_state_seq_set_data(self, ctx, buffer, size, seq):
        if self.fail_restore:
            return 0
        self.llama.kv = np.frombuffer(bytes(buffer), dtype=np.int32).tolist()
        return size


class FakeContext:
    def __init__(self, llama):
        self.llama, self.ctx = llama, object()

    def kv_cache_clear(self):
        self.llama.kv = []


class FakeLlama:
    def __init__(self):
        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0
        self.kv: list[int] = []
        self._requires_eval = False
        self._ctx = FakeContext(self)

    def reset(self):
        self.n_tokens = 0

    def read(self, tokens):
        """What a completion leaves behind: its prompt and reply tokens in the cache."""
        self.input_ids[: len(tokens)] = tokens
        self.n_tokens = len(tokens)
        self.kv = list(tokens)


def _call(states, llama, system, tokens):
    states.before([{"role": "system", "content": system}, {"role": "user", "content": "q"}])
    restored = list(llama.input_ids[: llama.n_tokens])
    llama.read(tokens)
    return restored


def test_a_system_prompt_s_cache_comes_back_after_another_role_s_call():
    llama = FakeLlama()
    states = SystemPrefixStates(llama, FakeLow(llama))
    assert _call(states, llama, "router", [1, 2, 3, 9]) == []  # first call: nothing saved yet
    # a new role: the router's cache is saved; none to restore, the library reads past the live cache's prefix
    assert _call(states, llama, "answer", [5, 6, 7]) == [1, 2, 3, 9] and "router" in states._states
    back = _call(states, llama, "router", [1, 2, 3, 8])
    assert back == [1, 2, 3, 9] and llama._requires_eval  # restored: only the tokens after the common prefix are read
    assert _call(states, llama, "answer", [5, 6, 7, 4]) == [5, 6, 7]


def test_the_same_system_prompt_keeps_the_live_cache():
    llama = FakeLlama()
    states = SystemPrefixStates(llama, FakeLow(llama))
    _call(states, llama, "answer", [5, 6, 7])
    assert _call(states, llama, "answer", [5, 6, 8]) == [5, 6, 7]  # the context's own cache, not a saved copy
    assert not states._states


def test_a_failed_restore_leaves_a_cleared_context():
    llama = FakeLlama()
    low = FakeLow(llama)
    states = SystemPrefixStates(llama, low)
    _call(states, llama, "router", [1, 2, 3])
    _call(states, llama, "answer", [5, 6])
    low.fail_restore = True
    assert _call(states, llama, "router", [1, 2, 4]) == [] and llama.kv == [1, 2, 4]


def test_no_more_than_max_prompts_are_kept():
    llama = FakeLlama()
    states = SystemPrefixStates(llama, FakeLow(llama))
    for role in range(MAX_PROMPTS + 3):
        _call(states, llama, f"role {role}", [role, role + 1])
    assert len(states._states) == MAX_PROMPTS and "role 0" not in states._states
