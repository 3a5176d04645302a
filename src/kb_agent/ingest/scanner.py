"""Walk indexed roots: which files to consider (their ACLs are resolved by ingest/acl.py)."""

from __future__ import annotations

import os
import stat
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
    knowledge base's roots (resolved): symlinks may point into any of them. What cannot be indexed comes
    with a `skip_reason`: a name that is not UTF-8, a FIFO/socket/device, a folder that cannot be read."""
    root = root.resolve()
    roots = {root, *(Path(r) for r in all_roots)}
    if root.is_file():
        yield FoundFile(root, root.name)
        return
    unreadable: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable.append):
        yield from _unreadable(root, unreadable, Path(dirpath))  # reported where the walk met them
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = here / name
            yield FoundFile(path, _display(root, path), _problem(path, roots))
    yield from _unreadable(root, unreadable, root)


def _unreadable(root: Path, errors: list[OSError], where: Path) -> Iterator[FoundFile]:
    while errors:
        error = errors.pop()
        folder = Path(error.filename or where)
        yield FoundFile(folder, _display(root, folder), f"cannot read folder: {error.strerror or error}")


def _display(root: Path, path: Path) -> str:
    """The citation path; bytes that are not UTF-8 shown escaped (`bad_\\xff.md`), never as surrogates."""
    display = f"{root.name}/{path.relative_to(root).as_posix()}" if path != root else root.name
    return os.fsencode(display).decode("utf-8", "backslashreplace")


def _problem(path: Path, roots: set[Path]) -> str | None:
    try:
        os.fsencode(str(path)).decode("utf-8")
    except UnicodeDecodeError:
        return "file name is not valid UTF-8 (rename the file to index it)"
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    if stat.S_ISLNK(mode):
        return symlink_problem(path, roots)
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return f"not a regular file ({kind})"
    return None
