"""A small REST client for connectors: auth from the vault at call time, retries with backoff that honour
Retry-After, clear errors for 401/403/404/429, and a persistent TTL cache keyed by credential name.

It reaches only its configured host: redirects are followed by hand and each hop must stay on that host.
Whatever a server sends back (error pages, payloads) is scrubbed of the credential in every form it was
sent in, so a server that reflects `Authorization` cannot put the secret into a tool error or the audit."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from kb_agent.governance.vault import Secret
from kb_agent.retry import GATEWAY_STATUSES, RetryableStatus, call_with_retries


class ConnectorError(RuntimeError):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class TTLCache:
    """SQLite key/value store with an expiry per entry; survives restarts, shared by threads."""

    def __init__(self, path: Path, ttl_s: float):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.ttl_s = ttl_s
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT, expires REAL)")
        self._lock = threading.Lock()

    def get(self, key: str):
        with self._lock:
            row = self._db.execute("SELECT value, expires FROM cache WHERE key=?", (key,)).fetchone()
        if row is None or row[1] < time.time():
            return None
        return json.loads(row[0])

    def put(self, key: str, value) -> None:
        if self.ttl_s <= 0:
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?)", (key, json.dumps(value), time.time() + self.ttl_s)
            )

    def close(self) -> None:
        self._db.close()


def _error_detail(response: httpx.Response) -> str:
    """Jira: errorMessages/errors; Confluence: message; else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip()
    if isinstance(body, dict):
        parts = [*(body.get("errorMessages") or []), *(f"{k}: {v}" for k, v in (body.get("errors") or {}).items())]
        if body.get("message"):
            parts.append(str(body["message"]))
        return "; ".join(str(p) for p in parts)[:300]
    return ""


def _scrub(value, forms: list[str]):
    """Every string inside `value` with each form of the credential replaced."""
    if not forms:
        return value
    if isinstance(value, str):
        for form in forms:
            value = value.replace(form, "[REDACTED]")
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, forms) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, forms) for v in value]
    return value


class RestClient:
    def __init__(
        self,
        base_url: str,
        *,
        name: str,
        credential: str | None,
        secret: Callable[[], Secret | None],
        cache: TTLCache | None = None,
        timeout_s: float = 20.0,
        max_retries: int = 3,
        max_wait_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.name, self.credential = name, credential
        self._secret, self._cache = secret, cache
        self.timeout_s, self.max_retries, self.max_wait_s = timeout_s, max_retries, max_wait_s
        self._transport = transport

    def _headers(self) -> tuple[dict[str, str], list[str]]:
        """Request headers, and every form of the credential they carry (to scrub from what comes back)."""
        headers = {"Accept": "application/json", "User-Agent": "kb-agent"}
        forms: list[str] = []
        secret = self._secret()
        if secret is not None:
            value = secret.reveal()
            if ":" in value:  # user:token (Cloud e-mail + API token, or Server user + password)
                encoded = base64.b64encode(value.encode()).decode()
                headers["Authorization"] = "Basic " + encoded
                forms += [encoded, encoded.rstrip("="), value, value.split(":", 1)[1]]
            else:  # a personal access token (Server / Data Center)
                headers["Authorization"] = f"Bearer {value}"
                forms.append(value)
        return headers, sorted({f for f in forms if len(f) >= 4}, key=len, reverse=True)

    def get_json(self, path: str, params: dict | None = None, *, use_cache: bool = True):
        params = {k: v for k, v in (params or {}).items() if v is not None}
        key = json.dumps([self.credential, self.base_url, path, sorted(params.items())], default=str)
        if use_cache and self._cache is not None and (hit := self._cache.get(key)) is not None:
            return hit
        url = f"{self.base_url}{path}"
        headers, secret_forms = self._headers()
        with httpx.Client(timeout=self.timeout_s, transport=self._transport, follow_redirects=False) as client:

            def attempt() -> httpx.Response:
                response = self._get(client, url, params, headers)
                if response.status_code in GATEWAY_STATUSES:
                    raise RetryableStatus(response)
                return response

            try:
                response = call_with_retries(attempt, attempts=self.max_retries + 1, max_wait_s=self.max_wait_s)
            except RetryableStatus as exc:  # still busy, or asks for a longer wait: reported as a clear error
                response = exc.response
            except httpx.TimeoutException:
                raise ConnectorError(f"{self.name}: no answer within {self.timeout_s:.0f}s") from None
            except httpx.HTTPError as exc:
                raise ConnectorError(f"{self.name}: cannot reach {self.base_url} ({type(exc).__name__})") from None
        return self._finish(response, key, url, use_cache, secret_forms)

    def _get(self, client: httpx.Client, url: str, params: dict, headers: dict, max_hops: int = 5) -> httpx.Response:
        """GET that follows redirects only within the configured host (scheme, host and port)."""
        origin = httpx.URL(self.base_url)
        response = client.get(url, params=params, headers=headers)
        for _ in range(max_hops):
            if not response.is_redirect:
                return response
            target = response.url.join(response.headers.get("Location", ""))
            if (target.scheme, target.host, target.port) != (origin.scheme, origin.host, origin.port):
                raise ConnectorError(
                    f"{self.name}: refused a redirect to {target.scheme}://{target.host} (only "
                    f"{origin.host} is configured)",
                    502,
                )
            response = client.get(target, headers=headers)
        raise ConnectorError(f"{self.name}: more than {max_hops} redirects", 502)

    def _finish(self, response: httpx.Response, key: str, url: str, use_cache: bool, secret_forms: list[str]):
        status = response.status_code
        detail = _scrub(_error_detail(response), secret_forms) if status >= 400 else ""
        suffix = f": {detail}" if detail else ""
        if status == 401:
            raise ConnectorError(
                f"{self.name}: 401 unauthorized - credential {self.credential!r} was rejected{suffix}", 401
            )
        if status == 403:
            raise ConnectorError(
                f"{self.name}: 403 forbidden - credential {self.credential!r} may not read this{suffix}", 403
            )
        if status == 404:
            raise ConnectorError(f"{self.name}: 404 not found{suffix}", 404)
        if status == 429:
            after = response.headers.get("Retry-After")
            raise ConnectorError(f"{self.name}: 429 rate limited" + (f"; retry after {after}s" if after else ""), 429)
        if status >= 400:
            raise ConnectorError(f"{self.name}: HTTP {status}{suffix}", status)
        try:
            data = _scrub(response.json(), secret_forms)
        except ValueError:
            raise ConnectorError(f"{self.name}: {url} did not return JSON") from None
        if use_cache and self._cache is not None:
            self._cache.put(key, data)
        return data
