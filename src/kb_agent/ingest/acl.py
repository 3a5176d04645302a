"""Where a file's ACL comes from, and the one rule that combines the sources.

Sources: every `.kbacl` from the file's folder up to the file-system root (not only inside the indexed
root), the `--acl` of every indexed root that contains the file, and the file's own front matter or
record `acl`. Each source that names groups *narrows*: the file is readable by the groups every source
names (the intersection). No source names a group: public. An empty intersection, or a `.kbacl` that
names no group, means "no group": only an unrestricted caller (the single-user owner) may read it.

Anything unreadable or ambiguous fails closed: `AclError`, and the indexer skips the file with the reason
(and removes an earlier indexed version). An author's or operator's mistake may hide a file, never
publish it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kb_agent.governance.access import NOBODY, PUBLIC_TAG
from kb_agent.ingest.models import LoaderError

ACL_FILE = ".kbacl"
MAX_ACL_FILE_BYTES = 64 * 1024
_GROUP_RE = re.compile(r"^[^\s,#\"'`\[\]{}\x00-\x1f]{1,128}$")


class AclError(LoaderError, ValueError):
    """An ACL source exists but cannot be read unambiguously: the file is skipped, never made public."""


@dataclass(frozen=True)
class AclSource:
    kind: str  # ".kbacl" | "--acl" | "front matter" | "record"
    where: str  # the .kbacl file, the root, or the file
    groups: frozenset[str]  # empty = names no group (nobody)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "where": self.where, "groups": sorted(self.groups)}


def check_group(name: str, where: str) -> str:
    """A group name: no spaces, commas, quotes, brackets or control characters; not a reserved tag."""
    if not _GROUP_RE.match(name) or name in (PUBLIC_TAG, NOBODY):
        raise AclError(f"{where}: {name!r} is not a valid group name (one name, no spaces or commas)")
    return name


def groups_from_value(value, where: str) -> frozenset[str]:
    """A front-matter or record `acl` value: a list of names, or one string of comma-separated names.

    Empty values (`[]`, `""`, `[""]`, `acl:` with nothing) and non-names (booleans - YAML reads `no` as
    false -, numbers with decimals, mappings) are rejected: they would otherwise make the file public."""
    if isinstance(value, str):
        items: list = [part.strip() for part in value.split(",")]
    elif isinstance(value, list):
        items = value
    else:
        raise AclError(f"{where}: acl must be a list of group names, got {_type_name(value)}")
    groups = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise AclError(f"{where}: acl entry {item!r} is not a group name")
        name = str(item).strip()
        if not name:
            raise AclError(f"{where}: acl has an empty group name; list the groups that may read the file")
        groups.append(check_group(name, where))
    if not groups:
        raise AclError(
            f"{where}: acl is empty; list the groups that may read the file (a file ACL can only "
            "narrow its folder's ACL)"
        )
    return frozenset(groups)


def _type_name(value) -> str:
    return "nothing" if value is None else type(value).__name__


def read_acl_file(path: Path) -> frozenset[str]:
    """One group per line, `#` comments. A file that names no group means "no group", not "public"."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise AclError(f"{path} is not a regular file")
        if info.st_size > MAX_ACL_FILE_BYTES:
            raise AclError(f"{path} is larger than {MAX_ACL_FILE_BYTES // 1024} KB")
        raw = path.read_bytes()
    except OSError as exc:
        raise AclError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AclError(f"{path} is not valid UTF-8") from None
    groups = set()
    for number, line in enumerate(text.splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if name:
            groups.add(check_group(name, f"{path} line {number}"))
    return frozenset(groups)


def combine(sources: Iterable[AclSource]) -> list[str]:
    """The intersection of every source's groups; [] (public) when there is no source."""
    sets = [s.groups for s in sources]
    if not sets:
        return []
    common = frozenset.intersection(*sets)
    return sorted(common) if common else [NOBODY]


class AclResolver:
    """Folder-level sources for files of one index run (`.kbacl` chains cached per folder)."""

    def __init__(self, roots: dict[str, list[str]]):
        self.roots = {Path(root): frozenset(acl) for root, acl in roots.items() if acl}
        self._chains: dict[Path, tuple[AclSource, ...] | AclError] = {}

    def for_file(self, path: Path) -> list[AclSource]:
        """Sources of the file at `path` (a real path) and of its target when it is a symlink."""
        places = [Path(os.path.abspath(path))]
        if os.path.islink(path):
            places.append(Path(os.path.realpath(path)))
        sources: dict[tuple[str, str], AclSource] = {}
        for place in places:
            for source in (*self._chain(place.parent), *self._root_sources(place)):
                sources.setdefault((source.kind, source.where), source)
        return list(sources.values())

    def _root_sources(self, path: Path) -> list[AclSource]:
        return [
            AclSource("--acl", str(root), groups)
            for root, groups in self.roots.items()
            if path == root or path.is_relative_to(root)
        ]

    def _chain(self, folder: Path) -> tuple[AclSource, ...]:
        cached = self._chains.get(folder)
        if cached is None:
            try:
                own = self._own(folder)
                parent = () if folder.parent == folder else self._chain(folder.parent)
                cached = (*own, *parent)
            except AclError as exc:
                cached = exc
            self._chains[folder] = cached
        if isinstance(cached, AclError):
            raise cached
        return cached

    @staticmethod
    def _own(folder: Path) -> tuple[AclSource, ...]:
        acl_file = folder / ACL_FILE
        if not os.path.lexists(acl_file):
            return ()
        return (AclSource(ACL_FILE, str(acl_file), read_acl_file(acl_file)),)
