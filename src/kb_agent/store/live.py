"""Reading an indexed file from disk, as it was indexed or not at all.

The ACL of a file was derived when it was indexed. Serving its live bytes after a change (a public file
replaced by a symlink to an hr file, an `acl:` added to its front matter) would show new text under the
old ACL until the next index run. So raw reads verify the bytes they return against the indexed hash
and refuse a file that changed."""

from __future__ import annotations

import hashlib
import os

from kb_agent.store.catalog import FileRecord
from kb_agent.text.decoding import decode_text


class StaleFile(PermissionError):
    """The file on disk is no longer what was indexed (content, or where its path resolves)."""


def read_indexed_bytes(record: FileRecord, max_bytes: int) -> bytes:
    """The file's bytes if they are exactly what was indexed; StaleFile otherwise, OSError if unreadable."""
    if record.real_path and os.path.realpath(record.source) != record.real_path:
        raise StaleFile(f"{record.path} now resolves to another file than the one indexed; re-index it")
    size = os.path.getsize(record.source)
    if size > max_bytes:
        raise ValueError(f"{record.path} is {size:,} bytes (limit {max_bytes:,})")
    with open(record.source, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if hashlib.sha256(data).hexdigest() != record.file_hash:
        raise StaleFile(f"{record.path} changed since it was indexed; re-index it to read it")
    return data


def indexed_lines(data: bytes) -> list[str]:
    """Lines as the loaders count them (split on \\n, a trailing \\r dropped, BOM tolerated)."""
    lines = decode_text(data).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
