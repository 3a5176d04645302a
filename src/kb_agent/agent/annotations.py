"""Code annotations (Material for MkDocs): a marker in a code block's comment, `# (1)!`, points to the item of
the numbered list after the block that explains that line. "1. Start from the official Python base image."
says what `FROM python:3.14` is; neither line alone answers "Which base image does the example start from?"."""

from __future__ import annotations

import re

# a comment that is only a marker annotates the next code line; a marker after code annotates its own line
_ALONE = re.compile(r"^\s*(?:#|//|--|<!--)\s*\((\d{1,2})\)!?\s*(?:-->)?\s*$")
_TRAILING = re.compile(r"\S.*?(?:#|//|--|<!--)\s*\((\d{1,2})\)!?\s*(?:-->)?\s*$")
_ITEM = re.compile(r"^(\d{1,2})\.\s+(\S.*)$")
_FENCE = ("```", "~~~")


def code_annotations(lines: list[str]) -> dict[int, str]:
    """Line position -> the text of the list item that annotates it, for the code lines of this passage."""
    found: dict[int, str] = {}
    position = 0
    while position < len(lines):
        if not lines[position].strip().startswith(_FENCE):
            position += 1
            continue
        marked: dict[int, int] = {}  # line -> its marker's number
        pending: int | None = None
        position += 1
        while position < len(lines) and not lines[position].strip().startswith(_FENCE):
            line = lines[position]
            alone, trailing = _ALONE.match(line), _TRAILING.match(line)
            if alone:
                pending = int(alone.group(1))
            elif trailing:
                marked[position], pending = int(trailing.group(1)), None
            elif line.strip() and pending is not None:
                marked[position], pending = pending, None
            position += 1
        position += 1
        items = _items_after(lines, position)
        found.update({line: items[number] for line, number in marked.items() if number in items})
    return found


def _items_after(lines: list[str], position: int) -> dict[int, str]:
    """The numbered list right after a code block: number -> the item's first line. Indented lines continue an
    item; any other text ends the list."""
    items: dict[int, str] = {}
    while position < len(lines):
        line = lines[position]
        item = _ITEM.match(line)
        if item:
            items[int(item.group(1))] = item.group(2).strip()
        elif line.strip() and not line.startswith((" ", "\t")):
            break
        position += 1
    return items
