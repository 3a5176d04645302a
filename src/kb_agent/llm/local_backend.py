"""The embedded default: a GGUF model run in-process by llama.cpp (xllamacpp), no server, no network.

One slot with `cache_prompt` keeps the KV cache of the previous call, and llama.cpp's host-memory prompt
cache keeps earlier prefixes, so calls that share a prefix (the same system prompt, the same evidence
block) only pay for the new tokens.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kb_agent.llm.base import LLM, Completion, LLMError, Message


@dataclass(frozen=True)
class Sampling:
    """How an in-process model samples unless a call says otherwise (seed -1: a new one each call)."""

    temperature: float = 0.1
    max_tokens: int = 768
    seed: int = -1


class InProcessChat(LLM):
    """What both in-process runtimes share: the model file's check, offline loading, one serialized context,
    the request built from the LLM options."""

    def __init__(self, model_path: Path, sampling: Sampling):
        super().__init__()
        if not model_path.is_file():
            raise LLMError(f"model file not found: {model_path} (run `kb-agent models install`)")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.model = model_path.stem
        self._sampling = sampling
        self._lock = threading.Lock()  # one context: calls are serialized, which also keeps its KV cache warm

    def _request(self, messages: list[Message], options: dict, stream: bool) -> dict:
        return chat_request(messages, options, stream, self._sampling)


class LocalLlamaChat(InProcessChat):
    def __init__(self, model_path: Path, *, threads: int, n_ctx: int = 8192, sampling: Sampling = Sampling()):
        super().__init__(model_path, sampling)
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            raise LLMError("the local model needs the 'local-llm' extra: pip install 'kb-agent[local-llm]'") from exc

        params = xlc.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.warmup = False
        params.verbosity = -1  # llama.cpp logs every request to stderr otherwise
        params.cache_prompt = True
        params.cache_ram_mib = 2048  # host-memory prompt cache: system prompts are restored, not recomputed
        self._server = xlc.Server(params)

    def _request(self, messages: list[Message], options: dict, stream: bool) -> dict:
        return {**super()._request(messages, options, stream), "cache_prompt": True}

    def _complete(self, messages: list[Message], **options) -> Completion:
        with self._lock:
            try:
                reply = self._server.handle_chat_completions(self._request(messages, options, False))
            except Exception as exc:  # the binding raises plain exceptions for bad requests
                raise LLMError(f"local model error: {exc}") from exc
        return completion_of(reply)

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        """Tokens as they are generated: the binding calls back from its own thread of work."""
        pieces: queue.Queue = queue.Queue()
        done = object()

        def on_chunk(chunk):
            chunk = chunk if isinstance(chunk, dict) else json.loads(chunk)
            if "error" in chunk:
                pieces.put(LLMError(f"local model error: {str(chunk['error'])[:300]}"))
            for choice in chunk.get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text:
                    pieces.put(text)

        def run():
            try:
                with self._lock:
                    self._server.handle_chat_completions(self._request(messages, options, True), on_chunk)
            except Exception as exc:
                pieces.put(LLMError(f"local model error: {exc}"))
            finally:
                pieces.put(done)

        threading.Thread(target=run, daemon=True).start()
        while (item := pieces.get()) is not done:
            if isinstance(item, Exception):
                raise item
            yield item


def chat_request(messages: list[Message], options: dict, stream: bool, sampling: Sampling) -> dict:
    """An OpenAI-style chat request for an in-process llama.cpp: the LLM options as its fields."""
    request: dict = {
        "messages": messages,
        "stream": stream,
        "temperature": options.get("temperature", sampling.temperature),
        "max_tokens": options.get("max_tokens") or sampling.max_tokens,
    }
    if sampling.seed >= 0:
        request["seed"] = sampling.seed
    if options.get("stop"):
        request["stop"] = options["stop"]
    if options.get("json_schema") is not None:  # grammar-constrained decoding
        request["response_format"] = {"type": "json_object", "schema": options["json_schema"]}
    return request


def completion_of(reply: object) -> Completion:
    """The text and token counts of an OpenAI-style chat reply; a reply without them is the model's error."""
    if not isinstance(reply, dict) or "error" in reply or not reply.get("choices"):
        raise LLMError(f"local model error: {str(reply)[:300]}")
    usage = reply.get("usage") or {}
    return Completion(
        text=reply["choices"][0]["message"].get("content") or "",
        prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0),
    )
