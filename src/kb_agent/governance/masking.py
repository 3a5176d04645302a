"""Mask sensitive values in text that leaves the system (answers, snippets, logs, audit records):
Luhn-checked card numbers, emails, phone numbers (incl. Chinese mobiles), Chinese resident ID numbers
(checksum), IBANs (mod 97), API keys and tokens, JWTs and PEM private keys. Policies may exempt kinds."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z ]+ )?PRIVATE KEY-----")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")
_SECRETS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{20,}|sk-ant-[A-Za-z0-9_-]{20,}|ghp_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})\b"
    r"|(?<=Bearer )[A-Za-z0-9._~+/-]{20,}=*|(?<=Basic )[A-Za-z0-9+/]{16,}={0,2}"
)
# a key that names a secret (DB_PASSWORD, aws_secret_access_key, client_secret, db.password, api-key, 密码) and
# its value, in env/INI (`K=v`, `K = v`), YAML (`k: v`), JSON (`"k": "v"`) or prose (`Password: `v``) style
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|passphrase|pwd|secret|secret[_-]?key|client[_-]?secret|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|(?:access|auth|refresh|session|api|bearer)"
    r"[_-]?token)"
)
_ASSIGNED_SECRET = re.compile(
    r"(?i)(\b" + _SECRET_NAME + r"[\"'`]?\s*(?::=|[:=])\s*|(?:密码|口令|密钥|秘钥|访问令牌|令牌)\s*[：:=]\s*)"
    r"(\"[^\"\n]{4,200}\"|'[^'\n]{4,200}'|`[^`\n]{4,200}`|[^\s\"'`,;]{4,200})"
)
_NOT_A_SECRET_VALUE = re.compile(
    r"(?i)^(?:str|string|bytes|int|bool|none|null|nil|true|false|required|optional|secretstr|hidden|redacted|"
    r"changeme|example|\*+|x+|\.\.\.|…)$"  # type names and placeholders
    r"|^[$%<{]|[()\[\]{}]"  # ${VAR}, %(x)s, <your-password>, {{ var }}, calls and indexing: code, not a value
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # form_data.password, settings.db_password
)
_VARIABLE = re.compile(r"(?i)^\w*(?:password|passwd|secret|token|key|pwd)\w*$")  # unquoted: hashed_password
_MIN_SECRET_CHARS = 6
MASK_KINDS = ("private_key", "jwt", "secret", "email", "iban", "cn_id", "card", "phone")  # each masks to [KIND]
PLACEHOLDER = re.compile(r"\[(?:" + "|".join(MASK_KINDS) + r")\]", re.I)  # what a masked value reads as
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_CN_ID = re.compile(r"(?<![\dA-Za-z])\d{17}[\dXx](?![\dA-Za-z])")
_CARD = re.compile(
    r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])"
    r"|(?<![\d.])\d{4}\.\d{4,6}\.\d{4,5}(?:\.\d{1,4}){0,2}(?!\.?\d)"
)  # also 4111.1111.1111.1111 (a sentence's full stop after it is not a fifth group)
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s-]?)?(?:\(\d{2,4}\)[\s-]?|\d{3}[\s.-])\d{3,4}[\s.-]\d{4}(?!\w)"  # intl / US
    r"|(?<!\d)(?:\+?86[\s-]?)?1[3-9]\d{9}(?!\d)"  # Chinese mobile
)
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_CHECK = "10X98765432"


def luhn_ok(digits: str) -> bool:
    total, parity = 0, len(digits) % 2
    for i, ch in enumerate(digits):
        d = int(ch)
        if i % 2 == parity:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def cn_id_ok(value: str) -> bool:
    total = sum(int(ch) * w for ch, w in zip(value[:17], _CN_ID_WEIGHTS, strict=True))
    return _CN_ID_CHECK[total % 11] == value[17].upper()


def iban_ok(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _card_ok(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


def _mask_cards(text: str, counts: dict[str, int]) -> str:
    """Card candidates, searched again inside one that fails the checksum: in "13812345678 4111 1111 1111
    1111" the first candidate starts at the phone number and fails, and the card begins after its space."""
    out, kept_to, start = [], 0, 0
    while (match := _CARD.search(text, start)) is not None:
        value = match.group(0)
        if _card_ok(value):
            out += [text[kept_to : match.start()], "[CARD]"]
            counts["card"] = counts.get("card", 0) + 1
            kept_to = start = match.end()
            continue
        inner = re.search(r"[ .]\d", value)  # the next digit group that may start a card
        start = match.start() + (inner.start() + 1 if inner else len(value))
    out.append(text[kept_to:])
    return "".join(out)


def mask_text(text: str, exempt: Iterable[str] = ()) -> tuple[str, dict[str, int]]:
    """(masked text, count per kind). Order matters: keys and tokens first, then structured numbers."""
    skip = set(exempt)
    counts: dict[str, int] = {}

    def label(kind: str, check=None):
        def repl(match: re.Match) -> str:
            value = match.group(0)
            if kind in skip or (check is not None and not check(value)):
                return value
            counts[kind] = counts.get(kind, 0) + 1
            return f"[{kind.upper()}]"

        return repl

    text = _PRIVATE_KEY.sub(label("private_key"), text)
    text = _JWT.sub(label("jwt"), text)
    text = _SECRETS.sub(label("secret"), text)
    if "secret" not in skip:

        def assigned(match: re.Match) -> str:
            value = match.group(2)
            quote = value[0] if value[0] in "\"'`" else ""
            inner = value[1:-1] if quote else value
            if (
                len(inner) < _MIN_SECRET_CHARS
                or _NOT_A_SECRET_VALUE.search(inner.strip())
                or (not quote and _VARIABLE.match(inner))
            ):
                return match.group(0)
            counts["secret"] = counts.get("secret", 0) + 1
            return f"{match.group(1)}{quote}[SECRET]{quote}"

        text = _ASSIGNED_SECRET.sub(assigned, text)
    text = _EMAIL.sub(label("email"), text)
    text = _IBAN.sub(label("iban", iban_ok), text)
    text = _CN_ID.sub(label("cn_id", cn_id_ok), text)
    if "card" not in skip:
        text = _mask_cards(text, counts)
    text = _PHONE.sub(label("phone"), text)
    return text, counts


_DIGIT_RUN = re.compile(r"\d(?:[ .-]?\d){6,}")  # maximal: a card right after a key's trailing digits is one run


def sensitive_spans(text: str) -> list[tuple[int, int]]:
    """Where something maskable may be (checksums not applied: a superset of what mask_text masks)."""
    spans: list[tuple[int, int]] = []
    for pattern in (_PRIVATE_KEY, _JWT, _SECRETS, _ASSIGNED_SECRET, _EMAIL, _IBAN, _CN_ID, _CARD, _PHONE, _DIGIT_RUN):
        spans += [m.span() for m in pattern.finditer(text)]
    return spans


class MaskingFilter(logging.Filter):
    """Masks what kb-agent's loggers emit (messages are rendered, masked, then frozen)."""

    def filter(self, record: logging.LogRecord) -> bool:
        masked, counts = mask_text(record.getMessage())
        if counts:
            record.msg, record.args = masked, None
        return True


def install_log_masking() -> None:
    """On every kb_agent logger (a logger's filters do not apply to records of its children)."""
    names = ["kb_agent", *(n for n in logging.Logger.manager.loggerDict if n.startswith("kb_agent."))]
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, MaskingFilter) for f in logger.filters):
            logger.addFilter(MaskingFilter())
