"""Settings: every knob is a `KB_AGENT_*` environment variable (or a line in `.env`)."""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat (Linux)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def free_cores(sample_s: float = 0.25) -> int:
    """CPUs not busy right now. Oversubscribing a compute-bound model collapses its throughput, so
    defaults use what is free. CPU use is sampled over a short window: the 1-minute load average still
    counts work that ended seconds ago (this process's own indexing, the previous command), which halved
    the local model's threads right after `kb-agent index`. Where /proc is missing, the load average."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    before = _cpu_times()
    if before is not None:
        time.sleep(sample_s)
    after = _cpu_times() if before is not None else None
    if before is not None and after is not None and after[1] > before[1]:
        busy = round((after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or cpus))
    else:
        try:
            busy = int(os.getloadavg()[0] + 0.5)
        except OSError:
            busy = 0
    return max(1, min(cpus, cpus - busy))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="KB_AGENT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    data_folder: Path = Field(default=Path("~/.kb-agent"), description="Where indexes, caches and logs live.")
    default_kb: str = Field(default="default", description="Knowledge base used when --kb is not given.")

    # Store backend
    store: Literal["embedded", "postgres"] = Field(
        default="embedded",
        description="embedded: SQLite + tantivy + faiss in the data folder; postgres: PostgreSQL + pgvector.",
    )
    database_url: SecretStr | None = Field(
        default=None,
        description="PostgreSQL URL for KB_AGENT_STORE=postgres (default: the one `kb-agent db start` wrote).",
    )
    db_pool_size: int = Field(default=4, ge=1, le=100, description="PostgreSQL connections per process.")
    pg_ef_search: int = Field(
        default=100, ge=10, le=1000, description="HNSW candidate list per dense search (hnsw.ef_search)."
    )
    pg_dense_fetch: int = Field(
        default=100,
        ge=1,
        le=1000,
        description="Rows a dense search reads at least from the HNSW index before the exact best k are kept "
        "(an ACL-filtered iterative scan finds truer neighbours when it reads more).",
    )
    db_os_user: str | None = Field(
        default=None,
        description="Unprivileged OS user that runs the embedded PostgreSQL when kb-agent runs as root "
        "(default: postgres if it exists, else nobody).",
    )

    # Ingestion
    chunk_max_chars: int = Field(default=2000, ge=200, description="Upper bound of a chunk's text length.")
    chunk_overlap_chars: int = Field(default=200, ge=0, description="Characters of context repeated between chunks.")
    max_file_mb: float = Field(default=20.0, gt=0, description="Files larger than this are skipped.")

    # Embeddings
    embedding_url: str | None = Field(default=None, description="OpenAI-compatible /embeddings base URL.")
    embedding_model: str | None = Field(default=None, description="Model name for the embeddings endpoint.")
    embedding_api_key: str | None = Field(default=None, description="API key for the embeddings endpoint.")
    embed_threads: int | None = Field(
        default=None, ge=1, description="Threads for the local embedder (unset: the CPUs free when it loads)."
    )
    embed_batch_size: int = Field(default=16, ge=1, description="Passages per embedding call.")
    embed_max_chars: int = Field(
        default=1000, ge=100, description="Head of each chunk that is embedded (embedding is compute-bound)."
    )
    embed_tails: bool = Field(
        default=True,
        description="A chunk longer than the embedded head gets a second vector for its last lines; dense "
        "search scores the chunk by the better of the two.",
    )

    # Retrieval
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")
    rrf_weight_bm25: float = Field(default=1.0, ge=0)
    rrf_weight_dense: float = Field(default=1.0, ge=0)
    rrf_weight_grep: float = Field(default=0.0, ge=0, description="0 keeps grep out of hybrid (its own mode).")
    rrf_weight_translated: float = Field(
        default=1.0,
        ge=0,
        description="Weight of the keyword list a Chinese query searches in English, through the "
        "lexicon learned from the KB's translated pages (0: never).",
    )
    fusion: Literal["adaptive", "rrf"] = Field(
        default="adaptive",
        description="adaptive: per query, each retriever's RRF weight scaled by how sharply its best hit stands "
        "out of its own top list; rrf: the fixed weights alone.",
    )
    max_chunks_per_doc: int = Field(default=0, ge=0, description="Cap of results per document (0 = no cap).")
    candidate_pool: int = Field(default=100, ge=10, description="Candidates each retriever feeds into fusion.")
    grep_context_lines: int = Field(default=10, ge=0, description="Lines of context around a grep match.")
    grep_timeout_s: float = Field(default=10.0, gt=0)

    # LLM
    llm_provider: Literal["auto", "openai", "local", "none"] = Field(
        default="auto", description="auto: an API if KB_AGENT_LLM_BASE_URL/API_KEY is set, else the local model."
    )
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible chat API base URL.")
    llm_api_key: str | None = Field(default=None, description="API key for the chat API.")
    llm_model: str | None = Field(default=None, description="Chat model name (main tier).")
    llm_model_fast: str | None = Field(default=None, description="Model for routing and grading.")
    llm_model_strong: str | None = Field(default=None, description="Model for escalation.")
    local_model: Literal["qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m"] = Field(
        default="qwen2.5-coder-1.5b-instruct-q4_k_m",
        description="Which bundled model `models install` fetches and the local backend runs (0.5B: faster, weaker).",
    )
    local_model_path: Path | None = Field(default=None, description="GGUF file for the local backend.")
    local_runtime: Literal["auto", "xllamacpp", "native"] = Field(
        default="auto",
        description="What runs the local model: native = llama.cpp compiled for this CPU (`scripts/setup.sh"
        " --native-llm`), xllamacpp = the prebuilt wheel; auto: native when it is installed.",
    )
    llm_threads: int | None = Field(
        default=None, ge=1, description="Threads for the local model (unset: the CPUs free when it loads)."
    )
    llm_context: int = Field(default=8192, ge=1024, description="Context window of the local model.")
    llm_seed: int = Field(
        default=0,
        ge=-1,
        description="Sampling seed of every model call: the same question over the same index gets the same "
        "answer, so a before/after comparison measures the change, not the dice (-1: a new seed each call).",
    )
    llm_keep_prefixes: bool = Field(
        default=True,
        description="Native runtime: keep each system prompt's KV cache across other roles' calls "
        "(a router call after an answer call reads only the question).",
    )
    llm_timeout_s: float = Field(default=120.0, gt=0)
    llm_max_retries: int = Field(default=2, ge=0)

    # Agent
    mode: Literal["graph", "tools"] = Field(default="graph", description="graph (CRAG) or tools (function calling).")
    max_iterations: int = Field(default=3, ge=1, le=10)
    step_call_budget: bool = Field(
        default=True,
        description="Hold a question to 2 + its steps model calls (issue 12): grading and another planning round "
        "run only while the budget leaves room for them and the answer; off, only KB_AGENT_MAX_ITERATIONS bounds "
        "the rounds.",
    )
    auto_approve_max_items: int = Field(default=2, ge=0)
    vector_score_threshold: float = Field(default=0.8, ge=0, le=1)
    query_planner_max_queries: int = Field(default=3, ge=1, le=5)
    tool_timeout_s: float = Field(default=20.0, gt=0)
    evidence_top_k: int = Field(default=6, ge=1, le=50, description="Passages each search tool returns.")
    read_file_max_bytes: int = Field(default=5_000_000, ge=1000, description="read_file refuses larger files.")
    route_by_shape: bool = Field(
        default=True,
        description="Route a plainly simple first question (short, one clause) without the LLM router call.",
    )
    weak_probe_router: Literal["multi_step", "always"] = Field(
        default="multi_step",
        description="After a weak first hop of a probed question, ask the LLM router only when it could split "
        "the question: a multi-step shape, a comparison or two questions in one (multi_step); always: for every "
        "weak probe.",
    )
    search_hops: int = Field(
        default=2,
        ge=1,
        le=2,
        description=(
            "Hops of the agent's main search: 2 also follows documents named in the top passages (no LLM call)."
        ),
    )
    multi_step: bool = Field(
        default=True,
        description="Answer bridge questions ('who directed the film that ...') in ordered search steps, each "
        "step's answer (copied from its evidence) put into the next step's query.",
    )
    synth_max_sources: int = Field(default=5, ge=1, le=30, description="Sources given to the answer model.")
    source_max_chars: int = Field(default=900, ge=200, description="Characters of each source in the prompt.")
    simple_max_sources: int = Field(
        default=4,
        ge=1,
        le=30,
        description="Sources in the answer prompt of a plainly simple question (3 starts a model-written answer "
        "~1.4 s sooner on a CPU but lost multi-hop answers; docs/benchmarks.md, stop 36).",
    )
    simple_source_chars: int = Field(
        default=450, ge=100, description="Characters of each source in a plainly simple question's prompt."
    )
    simple_prompt: Literal["auto", "ranked", "windows"] = Field(
        default="auto",
        description="What a plainly simple question's prompt shows: windows around the question's terms in the "
        "first sources ('windows'), or the extractive ranker's best lines, each with its neighbours ('ranked': "
        "0.7-0.8x the first token's time, equal answers on one-lookup sets, but it loses multi-hop answers; "
        "docs/benchmarks.md, stop 38); 'auto': ranked, but windows for a question shaped like a multi-hop one "
        "(a relative clause, a possessive, 'the publisher of <name>'; stop 39).",
    )
    quote_first: Literal["auto", "always", "never"] = Field(
        default="auto",
        description="A plainly simple question whose best evidence line says the question's key terms itself is "
        "answered by quoting that line, without a model call: 'auto' with the local CPU model (where a model "
        "answer takes 10-30 s), 'always' with any model, 'never'.",
    )
    ranked_prompt_chars: int = Field(
        default=1000, ge=200, description="Characters of the ranked lines in a plainly simple question's prompt."
    )

    # Governance
    policy_file: Path | None = Field(default=None, description="YAML policy; none = single-user mode.")
    audit_key: SecretStr | None = Field(
        default=None,
        description="Key of the audit log's HMAC chain; keep it "
        "outside the data folder (default: a key file beside the log).",
    )
    max_answer_seconds: float = Field(
        default=300.0,
        gt=0,
        description="Circuit breaker: answer with what was found once a question has run this long.",
    )

    # Server
    api_keys_file: Path | None = Field(default=None, description="YAML list of API keys -> users for `serve`.")
    jwt_secret: str | None = Field(default=None, description="HS256 secret for bearer JWTs (claims: sub, exp).")
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list, description="Allowed CORS origins.")
    server_max_body_bytes: int = Field(default=1_000_000, ge=1000)
    server_max_in_flight: int = Field(
        default=64, ge=1, description="Requests in progress at once; beyond it the server answers 503 + Retry-After."
    )
    server_max_per_client: int = Field(
        default=8, ge=1, description="Requests in progress per API key / token / address; beyond it 429 + Retry-After."
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Host names an authenticated server answers (empty: any)."
    )

    # Connectors (credentials live in the vault, referenced by name)
    jira_url: str | None = Field(default=None, description="Jira base URL, e.g. https://jira.example.com")
    jira_credential: str = Field(default="jira", description="Vault name of the Jira credential.")
    jira_deployment: Literal["auto", "server", "cloud"] = Field(default="auto")
    confluence_url: str | None = Field(
        default=None, description="Confluence base URL (Cloud: https://x.atlassian.net/wiki)"
    )
    confluence_credential: str = Field(default="confluence")
    connector_cache_ttl_s: float = Field(default=600.0, ge=0, description="Connector response cache lifetime.")
    web_allowlist: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Hosts or CIDRs web_fetch may reach even if private (comma-separated)."
    )
    web_max_bytes: int = Field(default=2_000_000, ge=1000)
    web_timeout_s: float = Field(default=15.0, gt=0)

    @field_validator("web_allowlist", "cors_origins", "allowed_hosts", mode="before")
    @classmethod
    def _split_list(cls, value):
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("data_folder", "local_model_path", "policy_file", "api_keys_file", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @model_validator(mode="after")
    def _overlap_below_max(self) -> Settings:
        if self.chunk_overlap_chars >= self.chunk_max_chars:
            raise ValueError(
                f"KB_AGENT_CHUNK_OVERLAP_CHARS ({self.chunk_overlap_chars}) must be smaller than "
                f"KB_AGENT_CHUNK_MAX_CHARS ({self.chunk_max_chars})"
            )
        return self

    @property
    def generation_backend(self) -> str:
        """Which kind of model writes answers: `openai` (an API), `local` (the bundled CPU model) or `none`."""
        if self.llm_provider == "auto":
            return "openai" if (self.llm_base_url or self.llm_api_key) else "local"
        return self.llm_provider

    @property
    def kbs_folder(self) -> Path:
        return self.data_folder / "kbs"

    @property
    def models_folder(self) -> Path:
        return self.data_folder / "models"

    @property
    def cache_folder(self) -> Path:
        return self.data_folder / "cache"

    @property
    def db_folder(self) -> Path:
        """Where `kb-agent db start` keeps the embedded PostgreSQL cluster and its connection file."""
        return self.data_folder / "postgres"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
