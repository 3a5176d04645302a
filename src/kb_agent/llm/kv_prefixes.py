"""The KV cache of each fixed system prompt, kept across calls of the native runtime (issue 12: "reuse the KV
cache of a fixed system prefix across questions").

One context holds the KV cache of its last call only. The agent's calls take turns between a few fixed system
prompts (router, step extraction, planner, grader, answer): each turn re-read the whole system prompt of the
new role - the router's ≈ 370 tokens are ≈ 2.8 s on two cores. Here, when a call's system prompt differs from
the last call's, the context's cache is saved under the old prompt (the KV cells of sequence 0 only, not the
≈ 300 MB logits buffer the library's whole-state save copies) and the new prompt's saved cache, if any, is
restored; llama-cpp-python then reads only the tokens after the longest common prefix, as on any warm call.

A restore that fails leaves the context cleared: the call reads its whole prompt, as without this cache."""

from __future__ import annotations

import ctypes
import logging
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from kb_agent.llm.base import Message

log = logging.getLogger("kb_agent.llm")

MAX_PROMPTS = 6  # distinct system prompts kept (the agent has six roles)
MAX_TOKENS = 3000  # a longer cache (a long answer prompt) is not kept: the system prompt is its smaller part


@dataclass(frozen=True)
class _Saved:
    tokens: np.ndarray
    data: bytes


class SystemPrefixStates:
    def __init__(self, llama, low=None):
        """`llama`: a `llama_cpp.Llama`; `low`: its low-level binding (`llama_cpp.llama_cpp`)."""
        self._llama = llama
        self._low = low if low is not None else __import__("llama_cpp").llama_cpp
        self._states: OrderedDict[str, _Saved] = OrderedDict()
        self._current: str | None = None  # the system prompt of the call whose cache the context holds

    def before(self, messages: list[Message]) -> None:
        """Call with the context's lock held, before the completion."""
        system = next((m["content"] for m in messages[:1] if m.get("role") == "system"), None)
        if system is None or system == self._current:
            return
        if self._current is not None:
            self._save(self._current)
        saved = self._states.get(system)
        if saved is not None:
            self._states.move_to_end(system)
            self._restore(saved)
        self._current = system

    def _save(self, key: str) -> None:
        llama = self._llama
        n = int(llama.n_tokens)
        if n == 0 or n > MAX_TOKENS:
            self._states.pop(key, None)
            return
        ctx = llama._ctx.ctx
        size = int(self._low.llama_state_seq_get_size(ctx, 0))
        buffer = (ctypes.c_uint8 * size)()
        written = int(self._low.llama_state_seq_get_data(ctx, buffer, size, 0))
        if written <= 0:
            return
        self._states[key] = _Saved(np.array(llama.input_ids[:n], copy=True), bytes(buffer)[:written])
        self._states.move_to_end(key)
        while len(self._states) > MAX_PROMPTS:
            self._states.popitem(last=False)

    def _restore(self, saved: _Saved) -> None:
        llama = self._llama
        llama._ctx.kv_cache_clear()
        llama.reset()
        buffer = (ctypes.c_uint8 * len(saved.data)).from_buffer_copy(saved.data)
        if int(self._low.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(saved.data), 0)) == 0:
            log.info("the saved KV cache of a system prompt could not be restored; reading the whole prompt")
            llama._ctx.kv_cache_clear()
            return
        n = len(saved.tokens)
        llama.input_ids[:n] = saved.tokens
        llama.n_tokens = n
        llama._requires_eval = True  # the logits are not restored: the last prompt token is read again
