"""`kb-agent acl explain`: who may read an indexed file, how its ACL was derived, and one user's verdict."""

from __future__ import annotations

from typing import Protocol

from kb_agent.governance.access import NOBODY, AccessFilter
from kb_agent.governance.policy import Decision


class AclRecord(Protocol):
    """What an explanation reads from an indexed file's record (the store's `FileRecord` has it)."""

    path: str
    acl: list[str]
    acl_sources: list[dict]


def explain(record: AclRecord, kb: str, decision: Decision) -> dict:
    access = (
        AccessFilter.unrestricted() if decision.acl_groups is None else AccessFilter.for_groups(decision.acl_groups)
    )
    sources = record.acl_sources
    if not record.acl:
        derived = "public: no ACL source names a group"
    elif record.acl == [NOBODY]:
        derived = "no group: an empty .kbacl, or sources with no group in common (only the owner reads it)"
    else:
        derived = "the groups every ACL source names (each source can only narrow)"
    if not decision.allows_kb(kb):
        verdict, why = "deny", f"the policy does not grant knowledge base {kb!r}"
    elif access.allows(record.acl):
        shared = sorted(set(record.acl) & set(decision.acl_groups or [])) if record.acl else []
        why = (
            "unrestricted (single-user owner)"
            if decision.acl_groups is None
            else "the document is public"
            if not record.acl
            else f"shares group(s) {shared}"
        )
        verdict = "allow"
    else:
        verdict, why = "deny", f"none of the user's groups {decision.acl_groups} is in the ACL"
    summary = (
        _summary(sources)
        if sources or not record.acl
        else "indexed before ACL sources were recorded: run `kb-agent index` on its root to see them"
    )
    return {
        "path": record.path,
        "kb": kb,
        "acl": record.acl,
        "acl_source": summary,
        "acl_sources": sources,
        "derivation": derived,
        "user": decision.user.user_id,
        "groups": decision.acl_groups,
        "rules": decision.rules,
        "decision": verdict,
        "reason": why,
    }


def _summary(sources: list[dict]) -> str:
    kinds = [s["kind"] for s in sources]
    if not kinds:
        return "public (no ACL)"
    names = {
        ".kbacl": ".kbacl file in its folder or a parent",
        "--acl": "--acl of the root",
        "front matter": "front matter of the file",
        "record": "the record's acl field",
    }
    return "; ".join(dict.fromkeys(names.get(k, k) for k in kinds))
