"""Pick the store backend from `KB_AGENT_STORE`: the embedded default or PostgreSQL + pgvector."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from kb_agent.config import Settings
from kb_agent.store.base import KnowledgeBase
from kb_agent.store.kb import EmbeddedKnowledgeBase

if TYPE_CHECKING:
    from kb_agent.store.postgres.kb import PostgresKnowledgeBase


def open_knowledge_base(
    name: str, settings: Settings, *, cache_folder: Path | None = None, model_id: str | None = None
) -> KnowledgeBase:
    if settings.store == "postgres":
        return _backend(settings)(name, settings, model_id=model_id)
    return EmbeddedKnowledgeBase(name, settings, cache_folder=cache_folder, model_id=model_id)


def _backend(settings: Settings) -> type[EmbeddedKnowledgeBase] | type[PostgresKnowledgeBase]:
    if settings.store == "postgres":
        from kb_agent.store.postgres.kb import PostgresKnowledgeBase  # psycopg only when chosen

        return PostgresKnowledgeBase
    return EmbeddedKnowledgeBase


def knowledge_base_exists(name: str, settings: Settings) -> bool:
    return _backend(settings).exists(name, settings)


def knowledge_base_names(settings: Settings) -> list[str]:
    return _backend(settings).list_names(settings)


def store_health(settings: Settings) -> dict:
    """What /healthz reports about the store: its kind and whether it answers."""
    if settings.store == "postgres":
        from kb_agent.store.postgres.db import database_for

        try:
            return {"store": "postgres", **database_for(settings).health()}
        except Exception as exc:  # unreachable, or no URL configured: report it, /healthz itself stays up
            return {"store": "postgres", "reachable": False, "error": str(exc)[:300]}
    folder = settings.kbs_folder
    return {"store": "embedded", "reachable": not folder.exists() or os.access(folder, os.R_OK | os.X_OK)}
