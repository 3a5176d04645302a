"""Walk indexed roots: which files to consider (their ACLs are resolved by ingest/acl.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

IGNORED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".idea",
    ".vscode",
    ".kb-agent",
}


@dataclass
class FoundFile:
    path: Path  # absolute, not resolved (a symlink stays the link)
    display: str  # path shown in citations, relative to the indexed root (prefixed by its name)
    skip_reason: str | None = None


def symlink_problem(path: Path, roots: Iterable[Path]) -> str | None:
    """A symlink is indexed only when it resolves to a regular file inside one of the KB's roots."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return "broken symlink"
    if not any(target == root or target.is_relative_to(root) for root in roots):
        return "symlink points outside every indexed root of this knowledge base"
    if not target.is_file():
        return "not a regular file"
    return None


def scan(root: Path, all_roots: Iterable[Path] = ()) -> Iterator[FoundFile]:
    """Yield every candidate file under `root` (or `root` itself when it is a file). `all_roots` are the
    knowledge base's roots (resolved): symlinks may point into any of them."""
    root = root.resolve()
    roots = {root, *(Path(r) for r in all_roots)}
    if root.is_file():
        yield FoundFile(root, root.name)
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = here / name
            display = f"{root.name}/{path.relative_to(root).as_posix()}"
            yield FoundFile(path, display, symlink_problem(path, roots) if path.is_symlink() else None)
