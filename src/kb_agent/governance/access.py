"""The caller's access scope, handed to every store query (never applied after the fact)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PUBLIC_TAG = "__public__"  # indexed on chunks that carry no ACL
NOBODY = "__nobody__"  # an ACL no caller's groups can match


@dataclass(frozen=True)
class AccessFilter:
    """`groups=None` means unrestricted (the local owner in single-user mode); otherwise a chunk is
    visible when it has no ACL or its ACL shares a group with `groups`."""

    groups: frozenset[str] | None

    @classmethod
    def unrestricted(cls) -> AccessFilter:
        return cls(groups=None)

    @classmethod
    def for_groups(cls, groups: Iterable[str]) -> AccessFilter:
        """Reserved tags are dropped: a caller cannot claim to be `__public__` or `__nobody__`."""
        return cls(groups=frozenset(g for g in (g.strip() for g in groups if g) if g and g not in (PUBLIC_TAG, NOBODY)))

    @property
    def restricted(self) -> bool:
        return self.groups is not None

    def allows(self, acl: Iterable[str]) -> bool:
        acl = list(acl)
        if self.groups is None or not acl:
            return True
        return not self.groups.isdisjoint(acl)

    def tags(self) -> list[str]:
        """Index terms a visible chunk may carry: the caller's groups plus the public marker."""
        return [*sorted(self.groups or ()), PUBLIC_TAG]

    def cache_key(self) -> str:
        return "*" if self.groups is None else "|".join(sorted(self.groups))
