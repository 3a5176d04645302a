"""Exact matches first: a query that is, or contains, an identifier (ticket key, snake_case, CamelCase,
dotted or kebab names, constants, paths, quoted strings) ranks the passages that contain it literally above
those that only resemble it - in every mode. Fusion alone lets a near-flat dense list bury the one BM25
passage that holds `max_age`; `LANG-75` must beat "fixes 75 typos (LANG-85)".

Only rare identifiers count (a product name in its own documentation is everywhere)."""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(
    r"`([^`\n]{2,80})`|[\"“]([^\"”\n]{2,80})[\"”]"  # quoted
    r"|\b([A-Z][A-Z0-9]{1,9}-\d{1,7})\b"  # ticket keys
    r"|((?:[\w.-]+/)+[\w.-]+\.\w{1,5}|[\w-]+\.(?:md|py|json|ya?ml|toml|txt|rst|jsonl|csv))"  # paths and files
    r"|\b([A-Za-z_][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+)\b"  # snake_case, dotted.names
    r"|\b([a-z]+(?:-[a-z0-9]+)+)\b"  # kebab-case (python-multipart)
    r"|\b([A-Za-z]*[a-z][A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]{2,}[A-Za-z0-9]*)\b"  # CamelCase, HTTPConnection
    r"|\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b"  # CONSTANT_NAMES
    r"|(?<![\w.])(\d{3,})(?![\w.])"  # status codes, ports, error numbers (418, 8080)
    r"|\b([A-Za-z]{2,}/\d+(?:\.\d+)?)(?![\w.])"  # a versioned name: HTTP/2, HTTP/1.1
)
VERSIONED = 9  # the group of a versioned name
_TICKET = 2
RARE = 0.05  # an identifier in more than this share of chunks is not specific enough to reorder by


_YEAR = re.compile(r"1\d{3}|20\d{2}")
_INITIALS = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{0,2}")
_PLAIN_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")
# "U.S", "D.C", "e.g": abbreviations written with dots are prose, not dotted names
_ABBREVIATION = re.compile(r"(?:[A-Z]\.)+[A-Z]|[a-z]\.[a-z]")
_DOTTED = 4  # the group of snake_case and dotted names


def _named(query: str) -> dict[str, int]:
    """Identifier -> the kind (regex group) of its first mention, at most 6, in order.

    Years, plain hyphenated words (runner-up, mom-and-pop) and dotted abbreviations (U.S.) are prose, not names:
    on HotpotQA putting passages that contain them first cost BM25 recall@5 4.5 points, and "a U.S. women's
    league" put every passage that says U.S. above the one that names the player asked about. In backticks
    they still count."""
    found: dict[str, int] = {}
    for match in _IDENTIFIER.finditer(query):
        index, value = next((i, g) for i, g in enumerate(match.groups()) if g)
        if index > 0 and (
            _YEAR.fullmatch(value)
            or _PLAIN_HYPHENATED.fullmatch(value)
            or (index == _DOTTED and _ABBREVIATION.fullmatch(value))
        ):
            continue
        if value.strip():
            found.setdefault(value.strip(), index)
    return dict(list(found.items())[:6])


def identifiers(query: str) -> list[str]:
    return list(_named(query))


def code_identifiers(query: str) -> list[str]:
    """The identifiers a query writes as code or a key - backticked, paths, snake_case and dotted names,
    constants, ticket keys, versioned names. Not CamelCase or bare numbers (also people's names, McDonald, and
    years), not double-quoted text (a work's title, which passages spell their own way: "Act of War; Direct
    Action"), not initials (D.P. Varma)."""
    return [
        value
        for value, kind in _named(query).items()
        if (kind in _CODE_LIKE or kind == _TICKET) and kind != 1 and not _INITIALS.fullmatch(value)
    ]


def versioned_names(query: str) -> list[str]:
    """The versioned names a query writes (HTTP/3): the version is the point, so "HTTP" alone is not them."""
    return [value for value, kind in _named(query).items() if kind == VERSIONED]


_CODE_LIKE = {0, 1, 3, 4, 7, VERSIONED}  # quoted, paths, snake_case / dotted, CONSTANTS, HTTP/2: never prose
_LOOKUP_WORDS = 4  # a query with at most this many other words is a lookup of its identifiers


def reordering_identifiers(query: str) -> list[str]:
    """The identifiers that put literal matches first. In a lookup ("LANG-75", "what is max_age") all
    of them; in a prose question only code-like ones: gene and product names look like ticket keys or
    CamelCase ("PD-1", "BCL-2", "iPSC"), and reordering by them cost SciFact 2.2 nDCG@10 points."""
    found = _named(query)
    if len(re.findall(r"\w+", _IDENTIFIER.sub(" ", query))) <= _LOOKUP_WORDS:
        return list(found)
    return [value for value, kind in found.items() if kind in _CODE_LIKE]


def pattern(identifier: str) -> re.Pattern:
    """Literal, case-insensitive, not inside a longer name: LANG-75 is not LANG-750, max_age not max_age_s.
    A number may sit inside a name (418 in HTTP_418_IM_A_TEAPOT), not inside a longer number."""
    if identifier.isdigit():
        return re.compile(rf"(?<![0-9]){identifier}(?![0-9])")
    return re.compile(rf"(?<![\w-]){re.escape(identifier)}(?![\w-])", re.I)


def fetched_identifiers(identifiers: list[str], query: str) -> list[str]:
    """Those worth fetching every holder of, not only re-ranking: not a double-quoted title. Other passages
    mention a work by its title ("Diamond Cut"); fetching them all pushed a multi-hop question's second
    paragraph out of the top 5 on HotpotQA."""
    quoted = {value for value, kind in _named(query).items() if kind == 1}
    return [i for i in identifiers if i not in quoted]
