"""Bytes to text, one rule for every reader (loaders, read_file, grep windows): UTF-8 with or without a
BOM, UTF-16/UTF-32 when a BOM says so; undecodable bytes become U+FFFD instead of failing the file."""

from __future__ import annotations

import codecs

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def text_encoding(data: bytes) -> str:
    """The codec a byte-order mark names, else UTF-8."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec
    return "utf-8"


def has_wide_bom(data: bytes) -> bool:
    """UTF-16/32 text: its NUL bytes are characters, not a sign of a binary file."""
    return text_encoding(data) in ("utf-16", "utf-32")


def decode_text(data: bytes) -> str:
    return data.decode(text_encoding(data), errors="replace")
