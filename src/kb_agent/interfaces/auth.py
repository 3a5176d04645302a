"""Server authentication: API keys (KB_AGENT_API_KEYS_FILE) or HS256 JWTs (KB_AGENT_JWT_SECRET), mapped to
the policy's UserContext. Keys are stored as SHA-256 digests (`kb-agent hash-key KEY` prints one).

Only the keys file may mark a key `admin`; a JWT's claims are handed to the policy, which honours an
`admin` claim only when it says `trust_token_claims: true`."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kb_agent.governance.errors import Unauthenticated

AuthError = Unauthenticated  # the name the interfaces used before the error map moved into governance


@dataclass
class Principal:
    user_id: str
    admin: bool = False  # from the keys file only
    claims: dict | None = None  # a JWT's claims, for the policy to judge


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


@dataclass
class Authenticator:
    """keys file: {keys: [{key: "sha256:..." | "plain", user: alice, admin: false}, ...]}"""

    keys_file: Path | None
    jwt_secret: str | None
    allow_anonymous: bool = False
    _keys: dict[str, Principal] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        if self.jwt_secret is not None and len(self.jwt_secret.encode()) < 32:
            raise ValueError("KB_AGENT_JWT_SECRET must be at least 32 bytes (RFC 7518 §3.2)")
        if self.keys_file is not None:
            try:
                data = yaml.safe_load(Path(self.keys_file).read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as exc:
                raise ValueError(f"{self.keys_file}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
            entries = data.get("keys", []) if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise ValueError(f"{self.keys_file}: expected `keys: [{{key, user, admin}}, ...]`")
            for entry in entries:
                if not isinstance(entry, dict) or not entry.get("key") or not entry.get("user"):
                    raise ValueError(f"{self.keys_file}: every key needs 'key' and 'user'")
                digest = entry["key"] if str(entry["key"]).startswith("sha256:") else hash_key(str(entry["key"]))
                self._keys[digest] = Principal(str(entry["user"]), entry.get("admin") is True)

    @property
    def configured(self) -> bool:
        return bool(self._keys) or bool(self.jwt_secret)

    def from_headers(self, headers: Mapping[str, str]) -> Principal | None:
        lowered = {k.lower(): v for k, v in headers.items()}
        return self.authenticate(lowered.get("authorization"), lowered.get("x-api-key"))

    def authenticate(self, authorization: str | None, api_key: str | None) -> Principal | None:
        """None = anonymous (allowed only when no auth is configured and anonymous use was chosen)."""
        token = api_key
        if not token and authorization and authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        if not token:
            if self.allow_anonymous:
                return None
            raise Unauthenticated("missing credentials: send 'Authorization: Bearer <API key or JWT>' or 'X-API-Key'")
        if token.count(".") == 2 and self.jwt_secret:
            return self._jwt(token)
        digest = hash_key(token)
        for known, principal in self._keys.items():
            if hmac.compare_digest(known, digest):
                return principal
        raise Unauthenticated("invalid API key")

    def _jwt(self, token: str) -> Principal:
        import jwt

        try:
            claims = jwt.decode(token, self.jwt_secret or "", algorithms=["HS256"], options={"require": ["sub", "exp"]})
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the token has expired") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"invalid token ({type(exc).__name__})") from None
        return Principal(str(claims["sub"]), admin=False, claims=claims)
