"""The policy enforcement point (PEP). Every entry point opens its request here: one decision per request,
applied to the tool set, the knowledge bases, admin actions, budgets and rate limits - and audited. The
`Request` it returns carries the rest of governance (audit writer, metered models, outbound filter)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kb_agent.governance.access import AccessFilter
from kb_agent.governance.audit import AuditLog
from kb_agent.governance.budget import Budgets, LimitExceeded
from kb_agent.governance.errors import AccessDenied
from kb_agent.governance.identity import UserContext
from kb_agent.governance.policy import Decision, Policy
from kb_agent.governance.request import Request

__all__ = ["AccessDenied", "Gate"]


class Gate:
    def __init__(self, policy: Policy, budgets: Budgets, audit: AuditLog):
        self.policy, self.budgets, self.audit = policy, budgets, audit

    @classmethod
    def open(cls, policy_file: Path | None, data_folder: Path, audit: AuditLog) -> Gate:
        return cls(Policy.load(policy_file), Budgets(data_folder / "governance" / "usage.sqlite"), audit)

    def decide(self, user: UserContext, *, trace_id: str, action: str) -> Decision:
        decision = self.policy.decide(user)
        self.audit.write(
            "policy_decision",
            {
                "action": action,
                "decision": "allow",
                "user": user.user_id,
                "groups": decision.acl_groups,
                "rules": decision.rules,
                "tools": sorted(decision.tools) if decision.tools is not None else "*",
                "knowledge_bases": sorted(decision.knowledge_bases) if decision.knowledge_bases is not None else "*",
            },
            trace_id=trace_id,
        )
        return decision

    def deny(self, decision: Decision, *, trace_id: str, action: str, reason: str) -> AccessDenied:
        self.audit.write(
            "policy_decision",
            {
                "action": action,
                "decision": "deny",
                "user": decision.user.user_id,
                "reason": reason,
                "rules": decision.rules,
            },
            trace_id=trace_id,
        )
        return AccessDenied(reason)

    def check_kbs(self, decision: Decision, names: list[str], *, trace_id: str) -> None:
        refused = [n for n in names if not decision.allows_kb(n)]
        if refused:
            raise self.deny(
                decision,
                trace_id=trace_id,
                action="kb",
                reason=f"user {decision.user.user_id!r} may not use knowledge base(s) {refused}",
            )

    def admit(self, decision: Decision, *, trace_id: str) -> str | None:
        """Budgets and rate limits; returns a soft-limit warning, raises LimitExceeded at a hard limit."""
        try:
            return self.budgets.check(decision.user.user_id, decision.token_budget_per_day, decision.rate_limit_per_min)
        except LimitExceeded as exc:
            self.audit.write(
                "policy_decision",
                {"action": "admit", "decision": "deny", "reason": str(exc), "user": decision.user.user_id},
                trace_id=trace_id,
            )
            raise

    def begin(
        self, user: UserContext, kbs: list[str], *, action: str, admin: bool = False, trace_id: str | None = None
    ) -> Request:
        """Open a request: decide, check admin rights and knowledge bases, apply budgets and rate limits.
        The caller must `close()` it (or use `request()`, which does)."""
        trace_id = trace_id or uuid.uuid4().hex[:16]
        decision = self.decide(user, trace_id=trace_id, action=action)
        if admin:  # an admin action (indexing) may touch any knowledge base
            if not decision.admin:
                raise self.deny(
                    decision,
                    trace_id=trace_id,
                    action=action,
                    reason=f"{action} needs an admin (keys file `admin: true` or the policy's users.NAME.admin)",
                )
        else:
            self.check_kbs(decision, kbs, trace_id=trace_id)
        warning = self.admit(decision, trace_id=trace_id)
        return Request(
            user=user,
            decision=decision,
            action=action,
            kbs=kbs,
            trace_id=trace_id,
            audit=self.audit,
            budgets=self.budgets,
            warning=warning,
        )

    @contextmanager
    def request(self, user: UserContext, kbs: list[str], *, action: str, admin: bool = False) -> Iterator[Request]:
        req = self.begin(user, kbs, action=action, admin=admin)
        try:
            yield req
        except BaseException as exc:
            req.close(exc)
            raise
        req.close()

    @staticmethod
    def access(decision: Decision) -> AccessFilter:
        return (
            AccessFilter.unrestricted() if decision.acl_groups is None else AccessFilter.for_groups(decision.acl_groups)
        )

    def close(self) -> None:
        self.budgets.close()
