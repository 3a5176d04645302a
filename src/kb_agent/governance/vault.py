"""Connector credentials, encrypted at rest (Fernet: AES-128-CBC + HMAC) and referenced by name.

The key comes from KB_AGENT_VAULT_KEY (a Fernet key, `kb-agent vault keygen`) or, failing that, the OS
keyring when the `keyring` package and a backend are present. A secret is decrypted only inside the
connector call that needs it and is never logged, put in a prompt, a trace or an exception."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

_KEYRING_SERVICE = "kb-agent"


class VaultError(RuntimeError):
    pass


class Secret:
    """Holds a secret without ever showing it: repr/str/format are redacted."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"


def _key_from_environment(explicit: str | None) -> bytes:
    key = explicit or os.environ.get("KB_AGENT_VAULT_KEY")
    if not key:
        try:
            import keyring  # optional: OS keyring when available

            key = keyring.get_password(_KEYRING_SERVICE, "vault-key")
        except Exception:  # no package or no backend: fall through to the clear error below
            key = None
    if not key:
        raise VaultError("no vault key: set KB_AGENT_VAULT_KEY (create one with `kb-agent vault keygen`)")
    try:
        Fernet(key.encode() if isinstance(key, str) else key)
    except (ValueError, TypeError) as exc:
        raise VaultError("KB_AGENT_VAULT_KEY is not a valid Fernet key (32 url-safe base64 bytes)") from exc
    return key.encode() if isinstance(key, str) else key


class Vault:
    def __init__(self, path: Path, key: str | None = None):
        self.path = path
        self._key = key
        self._lock = threading.Lock()

    @staticmethod
    def generate_key() -> str:
        return Fernet.generate_key().decode()

    def _fernet(self) -> Fernet:
        return Fernet(_key_from_environment(self._key))

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise VaultError(f"vault file {self.path} is damaged") from exc

    def _save(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        tmp.replace(self.path)

    def set(self, name: str, secret: str) -> None:
        if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise VaultError(f"credential name {name!r}: use letters, digits, '-', '_' or '.'")
        with self._lock:
            data = self._load()
            data[name] = self._fernet().encrypt(secret.encode()).decode()
            self._save(data)

    def get(self, name: str) -> Secret:
        token = self._load().get(name)
        if token is None:
            raise VaultError(f"no credential named {name!r} in the vault (add it with `kb-agent vault set {name}`)")
        try:
            return Secret(self._fernet().decrypt(token.encode()).decode())
        except InvalidToken as exc:
            raise VaultError(f"credential {name!r} cannot be decrypted with this KB_AGENT_VAULT_KEY") from exc

    def names(self) -> list[str]:
        return sorted(self._load())

    def delete(self, name: str) -> bool:
        with self._lock:
            data = self._load()
            found = data.pop(name, None) is not None
            self._save(data)
            return found
