"""One map from failures to what a caller sees: the HTTP status and the CLI exit code are the same on
every path, and the message is masked like any other outbound text (no tracebacks leave the product).

    denied (policy, ACL, stale file, auth) -> 403/401, exit 3    limits -> 429, exit 3
    bad input (validation, unknown KB/path) -> 4xx, exit 2       internal error -> 500, exit 1
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kb_agent.governance.masking import mask_text


class AccessDenied(PermissionError):
    """The policy does not allow this request (a knowledge base, a tool, an admin action)."""


class Unauthenticated(PermissionError):
    """No or invalid credentials (HTTP 401), or credentials that are not allowed here (403)."""

    def __init__(self, message: str, status: int = 401):
        super().__init__(message)
        self.status = status


class LimitExceeded(PermissionError):
    """A budget or rate limit stops the request; the message says which and until when."""


class NotFound(LookupError):
    """A named thing (knowledge base, file, path) does not exist or is not visible to the caller."""


class Conflict(RuntimeError):
    """The request cannot run now (e.g. another process is writing to the knowledge base)."""


class Unavailable(RuntimeError):
    """The request needs something this installation does not have (e.g. a generative model): HTTP 503."""


class StoreDamaged(RuntimeError):
    """A store file is damaged beyond what can be rebuilt automatically; the message says what to do."""


class UpstreamError(RuntimeError):
    """A model endpoint or connector behind kb-agent failed."""


@dataclass(frozen=True)
class Failure:
    kind: str  # denied unauthenticated limited bad_input not_found conflict unavailable upstream damaged internal
    status: int
    exit_code: int
    message: str

    def body(self) -> dict:
        return {"error": {"code": self.status, "message": self.message}}


def classify(exc: BaseException) -> Failure:
    kind, status, code = _kind(exc)
    text = str(exc) or type(exc).__name__
    if kind == "internal":  # the type helps an operator; a traceback never leaves
        text = f"internal error ({type(exc).__name__}): {text}"
    if kind == "damaged" and not isinstance(exc, StoreDamaged):
        text = f"a knowledge-base file is damaged ({text}); `kb-agent repair --kb NAME` rebuilds what can be rebuilt"
    return Failure(kind, status, code, mask_text(text[:2000])[0])


def _kind(exc: BaseException) -> tuple[str, int, int]:
    if isinstance(exc, Unauthenticated):
        return "unauthenticated", exc.status, 3
    if isinstance(exc, LimitExceeded):
        return "limited", 429, 3
    if isinstance(exc, PermissionError):  # AccessDenied, ToolDenied, StaleFile, ...
        return "denied", 403, 3
    if isinstance(exc, NotFound | FileNotFoundError):
        return "not_found", 404, 2
    if isinstance(exc, Conflict):
        return "conflict", 409, 1
    if isinstance(exc, Unavailable):
        return "unavailable", 503, 1
    if isinstance(exc, UpstreamError):
        return "upstream", 502, 1
    if isinstance(exc, StoreDamaged):
        return "damaged", 500, 1
    if isinstance(exc, sqlite3.DatabaseError):  # a catalog or cache file that is not a database any more
        return "damaged", 500, 1
    if isinstance(exc, ValueError):  # validation errors, bad arguments (pydantic's ValidationError too)
        return "bad_input", 400, 2
    return "internal", 500, 1
