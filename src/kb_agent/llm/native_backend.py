"""The embedded model on llama.cpp built for this machine's CPU (`llama-cpp-python` compiled from its PyPI
source by `scripts/setup.sh --native-llm`).

The `xllamacpp` wheel is one AVX2 build for every x86 CPU; on a CPU with AVX-512 the same model reads a prompt
about twice as fast when llama.cpp is compiled for it (docs/benchmarks.md, stop 34), and reading the prompt is
what a user waits for before the first sentence. Same model file, same chat template (the GGUF's), same
requests: temperature, token limit, stop strings, JSON-schema-constrained decoding.

The KV cache of the previous call is kept, so a call sharing its prefix (the system prompt) only reads the new
tokens; the caches of the other roles' system prompts are kept beside it (`kv_prefixes`). No RAM cache of every
earlier prompt: saving the whole state after every call cost more than it saved (+1.2 s on a 750-token call).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kb_agent.llm.base import Completion, LLMError, Message
from kb_agent.llm.kv_prefixes import SystemPrefixStates
from kb_agent.llm.local_backend import InProcessChat, Sampling, completion_of

log = logging.getLogger("kb_agent.llm")
_LOADING = threading.Lock()  # the library's default model parameters are swapped while one model loads


def available() -> bool:
    """Whether llama-cpp-python is installed (it is only by the native setup: it is compiled here)."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


class NativeLlamaChat(InProcessChat):
    def __init__(
        self,
        model_path: Path,
        *,
        threads: int,
        n_ctx: int = 8192,
        sampling: Sampling = Sampling(),
        keep_prefixes: bool = True,
    ):
        super().__init__(model_path, sampling)
        try:
            import llama_cpp
        except ImportError as exc:
            hint = "run `bash scripts/setup.sh --native-llm`"
            raise LLMError(f"the native runtime needs llama-cpp-python: {hint}") from exc
        try:
            with _without_weight_repacking(llama_cpp):
                self._llama = llama_cpp.Llama(
                    model_path=str(model_path),
                    n_ctx=n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_batch=512,
                    flash_attn=True,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(f"local model could not be loaded: {exc}") from exc
        self._prefixes = SystemPrefixStates(self._llama) if keep_prefixes else None

    def _switch(self, messages: list[Message]) -> None:
        if self._prefixes is not None:
            try:
                self._prefixes.before(messages)
            except (AttributeError, TypeError, OSError) as exc:  # another binding layout: run without it
                log.warning("keeping the system prompts' KV caches failed (%s); reading each prompt whole", exc)
                self._prefixes = None
                self._llama._ctx.kv_cache_clear()
                self._llama.reset()

    def _complete(self, messages: list[Message], **options) -> Completion:
        with self._lock:
            self._switch(messages)
            try:
                reply: Any = self._llama.create_chat_completion(**self._request(messages, options, False))
            except (ValueError, RuntimeError) as exc:  # a prompt over the context, a bad schema
                raise LLMError(f"local model error: {exc}") from exc
        return completion_of(reply)

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        """Tokens as they are generated; the context stays locked until the caller has read them all or
        stopped reading (closing the generator releases it)."""
        with self._lock:
            self._switch(messages)
            try:
                chunks: Any = self._llama.create_chat_completion(**self._request(messages, options, True))
                for chunk in chunks:
                    for choice in chunk.get("choices", []):
                        if text := (choice.get("delta") or {}).get("content"):
                            yield text
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"local model error: {exc}") from exc


@contextlib.contextmanager
def _without_weight_repacking(llama_cpp):
    """Load with llama.cpp's extra weight buffers off. Measured on this machine (docs/benchmarks.md, stop 34):
    the CPU repacking reads prompts at 91 tokens/s against 130 without it, and the AMX repacking of this
    release crashes on the Q4_K_M file. `Llama` takes its model parameters from the library's defaults with
    no argument for this one, so the defaults are wrapped while the model loads."""
    low = getattr(llama_cpp, "llama_cpp", None)
    defaults = getattr(low, "llama_model_default_params", None)
    if defaults is None:  # another binding layout: load as it is
        yield
        return

    def without_repacking():
        params = defaults()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    with _LOADING:
        low.llama_model_default_params = without_repacking
        try:
            yield
        finally:
            low.llama_model_default_params = defaults
