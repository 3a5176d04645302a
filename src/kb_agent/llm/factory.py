"""Pick the LLM backends from settings: an OpenAI-compatible API, the local GGUF model, or none."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from kb_agent.config import Settings, free_cores
from kb_agent.llm.base import LLM, LLMError
from kb_agent.llm.model_install import is_installed, local_model_file, local_runtime, spec_named

log = logging.getLogger("kb_agent.llm")


@dataclass
class LLMTiers:
    """fast: routing and grading; main: synthesis; strong: escalation. All None = no generative model."""

    fast: LLM | None
    main: LLM | None
    strong: LLM | None
    notice: str | None = None

    @property
    def generative(self) -> bool:
        return self.main is not None


_local_cache: dict[tuple, LLM] = {}
_local_lock = threading.Lock()


def _local(settings: Settings) -> LLM:
    from kb_agent.llm import native_backend
    from kb_agent.llm.local_backend import LocalLlamaChat, Sampling

    path = local_model_file(settings)
    runtime = local_runtime(settings)
    key = (
        str(path),
        runtime,
        settings.llm_threads,
        settings.llm_context,
        settings.llm_keep_prefixes,
        settings.llm_seed,
    )
    with _local_lock:  # one copy of the weights per process
        if key not in _local_cache:
            threads = settings.llm_threads or free_cores()
            sampling = Sampling(seed=settings.llm_seed)
            if runtime == "native":
                _local_cache[key] = native_backend.NativeLlamaChat(
                    path,
                    threads=threads,
                    n_ctx=settings.llm_context,
                    sampling=sampling,
                    keep_prefixes=settings.llm_keep_prefixes,
                )
            else:
                _local_cache[key] = LocalLlamaChat(path, threads=threads, n_ctx=settings.llm_context, sampling=sampling)
        return _local_cache[key]


def build_llms(settings: Settings) -> LLMTiers:
    provider = settings.generation_backend
    if provider == "none":
        return LLMTiers(None, None, None)
    if provider == "openai":
        from kb_agent.llm.openai_backend import OpenAIChat

        if not settings.llm_model:
            raise LLMError("KB_AGENT_LLM_MODEL must name the chat model of the OpenAI-compatible API")

        def make(name: str | None) -> LLM:
            return OpenAIChat(
                base_url=settings.llm_base_url,
                api_key=settings.llm_api_key,
                model=name or settings.llm_model or "",
                timeout_s=settings.llm_timeout_s,
                max_retries=settings.llm_max_retries,
                seed=settings.llm_seed,
            )

        main = make(settings.llm_model)
        fast = make(settings.llm_model_fast) if settings.llm_model_fast else main
        strong = make(settings.llm_model_strong) if settings.llm_model_strong else main
        return LLMTiers(fast, main, strong)
    # local
    spec = spec_named(settings.local_model)
    if settings.local_model_path is None and not is_installed(settings.models_folder, spec):
        notice = (
            f"no generative model: {spec.filename} is not installed (run `kb-agent models install`);"
            " answering extractively from the evidence"
        )
        log.warning(notice)
        return LLMTiers(None, None, None, notice=notice)
    try:
        llm = _local(settings)
    except (LLMError, RuntimeError, ValueError) as exc:
        notice = f"local model unavailable ({exc}); answering extractively from the evidence"
        log.warning(notice)
        return LLMTiers(None, None, None, notice=notice)
    return LLMTiers(llm, llm, llm)
