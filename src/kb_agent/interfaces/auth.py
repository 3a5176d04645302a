"""Server authentication: API keys (KB_AGENT_API_KEYS_FILE) or HS256 JWTs (KB_AGENT_JWT_SECRET), mapped to
the policy's UserContext. Keys are stored as SHA-256 digests (`kb-agent serve --hash-key` prints one)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

import yaml


class AuthError(Exception):
    def __init__(self, message: str, status: int = 401):
        super().__init__(message)
        self.status = status


@dataclass
class Principal:
    user_id: str
    admin: bool = False


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class Authenticator:
    """keys file: {keys: [{key: "sha256:..." | "plain", user: alice, admin: false}, ...]}"""

    def __init__(self, keys_file: Path | None, jwt_secret: str | None, *, allow_anonymous: bool = False):
        if jwt_secret is not None and len(jwt_secret.encode()) < 32:
            raise ValueError("KB_AGENT_JWT_SECRET must be at least 32 bytes (RFC 7518 §3.2)")
        self.jwt_secret = jwt_secret
        self.allow_anonymous = allow_anonymous
        self._keys: dict[str, Principal] = {}
        if keys_file is not None:
            data = yaml.safe_load(Path(keys_file).read_text(encoding="utf-8")) or {}
            for entry in data.get("keys", []):
                if not isinstance(entry, dict) or not entry.get("key") or not entry.get("user"):
                    raise ValueError(f"{keys_file}: every key needs 'key' and 'user'")
                digest = entry["key"] if str(entry["key"]).startswith("sha256:") else hash_key(str(entry["key"]))
                self._keys[digest] = Principal(str(entry["user"]), bool(entry.get("admin", False)))

    @property
    def configured(self) -> bool:
        return bool(self._keys) or bool(self.jwt_secret)

    def authenticate(self, authorization: str | None, api_key: str | None) -> Principal | None:
        """None = anonymous (allowed only when no auth is configured and anonymous use was chosen)."""
        token = api_key
        if not token and authorization and authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        if not token:
            if self.allow_anonymous:
                return None
            raise AuthError("missing credentials: send 'Authorization: Bearer <API key or JWT>' or 'X-API-Key'")
        if token.count(".") == 2 and self.jwt_secret:
            return self._jwt(token)
        digest = hash_key(token)
        for known, principal in self._keys.items():
            if hmac.compare_digest(known, digest):
                return principal
        raise AuthError("invalid API key")

    def _jwt(self, token: str) -> Principal:
        import jwt

        try:
            claims = jwt.decode(token, self.jwt_secret, algorithms=["HS256"], options={"require": ["sub", "exp"]})
        except jwt.ExpiredSignatureError:
            raise AuthError("the token has expired") from None
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token ({type(exc).__name__})") from None
        return Principal(str(claims["sub"]), bool(claims.get("admin", False)))
