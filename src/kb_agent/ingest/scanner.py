"""Walk indexed roots: which files to consider, with the ACL each inherits from `.kbacl` files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

IGNORED_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".vscode", ".kb-agent",
}
ACL_FILE = ".kbacl"


@dataclass
class FoundFile:
    path: Path  # absolute
    display: str  # path shown in citations, relative to the indexed root (prefixed by its name)
    inherited_acl: list[str] | None  # from the nearest .kbacl; None when there is none
    skip_reason: str | None = None


def read_acl_file(path: Path) -> list[str]:
    """One group per line; blank lines and `#` comments ignored."""
    groups = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            groups.append(line)
    return groups


def scan(root: Path) -> Iterator[FoundFile]:
    """Yield every candidate file under `root` (or `root` itself when it is a file)."""
    root = root.resolve()
    if root.is_file():
        acl_file = root.parent / ACL_FILE
        acl = read_acl_file(acl_file) if acl_file.is_file() else None
        yield FoundFile(root, root.name, acl)
        return
    acl_stack: dict[Path, list[str] | None] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        parent_acl = acl_stack.get(here.parent) if here != root else None
        acl_file = here / ACL_FILE
        acl = read_acl_file(acl_file) if acl_file.is_file() else parent_acl
        acl_stack[here] = acl
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = here / name
            display = f"{root.name}/{path.relative_to(root).as_posix()}"
            reason = None
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    reason = "broken symlink"
                else:
                    if not target.is_relative_to(root):
                        reason = "symlink points outside the indexed root"
                    elif not target.is_file():
                        reason = "not a regular file"
            yield FoundFile(path, display, acl, reason)
