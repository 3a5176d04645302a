"""The policy enforcement point (PEP) the engine puts in front of every request: one decision per request,
applied to the tool set, the knowledge bases, the ACL filter, budgets and rate limits - and audited."""

from __future__ import annotations

from pathlib import Path

from kb_agent.governance.audit import AuditLog
from kb_agent.governance.budget import Budgets, LimitExceeded
from kb_agent.governance.identity import UserContext
from kb_agent.governance.policy import Decision, Policy
from kb_agent.store.access import AccessFilter


class AccessDenied(PermissionError):
    """The policy does not allow this request (a knowledge base, a tool)."""


class Gate:
    def __init__(self, policy: Policy, budgets: Budgets, audit: AuditLog):
        self.policy, self.budgets, self.audit = policy, budgets, audit

    @classmethod
    def open(cls, policy_file: Path | None, data_folder: Path, audit: AuditLog) -> Gate:
        return cls(Policy.load(policy_file), Budgets(data_folder / "governance" / "usage.sqlite"), audit)

    def decide(self, user: UserContext, *, trace_id: str, action: str) -> Decision:
        decision = self.policy.decide(user)
        self.audit.write("policy_decision", {
            "action": action, "decision": "allow", "user": user.user_id, "groups": user.groups,
            "rules": decision.rules, "tools": sorted(decision.tools) if decision.tools is not None else "*",
            "knowledge_bases": sorted(decision.knowledge_bases) if decision.knowledge_bases is not None else "*",
        }, trace_id=trace_id)
        return decision

    def deny(self, decision: Decision, *, trace_id: str, action: str, reason: str) -> AccessDenied:
        self.audit.write("policy_decision", {"action": action, "decision": "deny", "user": decision.user.user_id,
                                             "reason": reason, "rules": decision.rules}, trace_id=trace_id)
        return AccessDenied(reason)

    def check_kbs(self, decision: Decision, names: list[str], *, trace_id: str) -> None:
        refused = [n for n in names if not decision.allows_kb(n)]
        if refused:
            raise self.deny(decision, trace_id=trace_id, action="kb",
                            reason=f"user {decision.user.user_id!r} may not use knowledge base(s) {refused}")

    def admit(self, decision: Decision, *, trace_id: str) -> str | None:
        """Budgets and rate limits; returns a soft-limit warning, raises LimitExceeded at a hard limit."""
        try:
            return self.budgets.check(decision.user.user_id, decision.token_budget_per_day,
                                      decision.rate_limit_per_min)
        except LimitExceeded as exc:
            self.audit.write("policy_decision", {"action": "admit", "decision": "deny", "reason": str(exc),
                                                 "user": decision.user.user_id}, trace_id=trace_id)
            raise

    def enter(self, user: UserContext, kbs: list[str], *, trace_id: str, action: str) -> tuple[Decision, str | None]:
        """The entry of every request: decide, check the knowledge bases, apply budgets and rate limits.
        Returns the decision and a soft-limit warning (or None)."""
        decision = self.decide(user, trace_id=trace_id, action=action)
        self.check_kbs(decision, kbs, trace_id=trace_id)
        return decision, self.admit(decision, trace_id=trace_id)

    @staticmethod
    def access(decision: Decision) -> AccessFilter:
        return AccessFilter.unrestricted() if decision.acl_groups is None else AccessFilter.for_groups(
            decision.acl_groups)

    def close(self) -> None:
        self.budgets.close()
