"""Mask sensitive values in text that leaves the system: card numbers (Luhn-checked), emails, phone
numbers (incl. Chinese mobiles), API keys and tokens."""

from __future__ import annotations

import re

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s-]?)?(?:\(\d{2,4}\)[\s-]?|\d{3}[\s.-])\d{3,4}[\s.-]\d{4}(?!\w)"  # intl / US
    r"|(?<!\d)(?:\+?86[\s-]?)?1[3-9]\d{9}(?!\d)"  # Chinese mobile
)
_SECRETS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{20,}|sk-ant-[A-Za-z0-9_-]{20,}|ghp_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})\b"
    r"|(?<=Bearer )[A-Za-z0-9._~+/-]{20,}=*"
)


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


def mask_text(text: str) -> tuple[str, dict[str, int]]:
    counts = {"secret": 0, "email": 0, "card": 0, "phone": 0}

    def sub(kind: str, label: str):
        def repl(match: re.Match) -> str:
            counts[kind] += 1
            return label
        return repl

    def card(match: re.Match) -> str:
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            counts["card"] += 1
            return "[CARD]"
        return match.group(0)

    text = _SECRETS.sub(sub("secret", "[SECRET]"), text)
    text = _EMAIL.sub(sub("email", "[EMAIL]"), text)
    text = _CARD.sub(card, text)
    text = _PHONE.sub(sub("phone", "[PHONE]"), text)
    return text, {k: v for k, v in counts.items() if v}
