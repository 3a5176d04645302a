"""The policy decision point (PDP): who may use which tools and knowledge bases, with which extra ACL
tags, budgets, rate limits and masking exemptions. One YAML file (KB_AGENT_POLICY_FILE):

    users:
      alice: {groups: [hr, staff], tenant: acme, attributes: {clearance: secret}, admin: false}
    groups:
      staff:
        tools: [hybrid_search, read_file]      # or "*"
        knowledge_bases: ["*"]
        acl_tags: [intranet]                   # extra ACL groups members may read
        token_budget_per_day: 200000           # hard limit; a warning from 80 %
        rate_limit_per_min: 30
        mask_exempt: [email]
        when: {tenant: acme, clearance: [secret, top-secret]}   # ABAC: all must hold
    default_groups: [everyone]                 # for users the file does not list
    trust_token_claims: false                  # true: a JWT claim `admin: true` makes its user an admin

A group whose `when` fails for a user contributes nothing to that user's request: no tools, no knowledge
bases, no budgets and no ACL groups. No file means single-user mode: everything allowed (logged once)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kb_agent.governance.identity import UserContext

log = logging.getLogger("kb_agent.governance")

MASK_KINDS = ("email", "phone", "card", "secret", "cn_id", "iban", "jwt", "private_key")


class PolicyError(ValueError):
    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserEntry(_Strict):
    groups: list[str] = Field(default_factory=list)
    tenant: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)
    admin: bool = False


class GroupRule(_Strict):
    tools: list[str] = Field(default_factory=list)
    knowledge_bases: list[str] = Field(default_factory=lambda: ["*"])
    acl_tags: list[str] = Field(default_factory=list)
    token_budget_per_day: int | None = Field(default=None, ge=1)
    rate_limit_per_min: int | None = Field(default=None, ge=1)
    mask_exempt: list[str] = Field(default_factory=list)
    when: dict[str, str | list[str]] = Field(default_factory=dict)

    @field_validator("mask_exempt")
    @classmethod
    def _kinds(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(MASK_KINDS))
        if unknown:
            raise ValueError(f"unknown masking kinds {unknown}; use {list(MASK_KINDS)}")
        return value


class PolicyFile(_Strict):
    version: int = 1
    users: dict[str, UserEntry] = Field(default_factory=dict)
    groups: dict[str, GroupRule] = Field(default_factory=dict)
    default_groups: list[str] = Field(default_factory=list)
    trust_token_claims: bool = False


@dataclass
class Decision:
    """What the PDP grants one caller; every enforcement point reads this."""

    user: UserContext
    tools: set[str] | None  # None = all
    knowledge_bases: set[str] | None
    acl_groups: list[str] | None  # None = unrestricted (single-user owner)
    token_budget_per_day: int | None = None
    rate_limit_per_min: int | None = None
    mask_exempt: set[str] = field(default_factory=set)
    rules: list[str] = field(default_factory=list)  # which groups' rules applied
    admin: bool = False

    def allows_tool(self, name: str) -> bool:
        return self.tools is None or name in self.tools

    def allowed_tools(self, names: Iterable[str]) -> set[str]:
        """The names among `names` this decision allows."""
        return {name for name in names if self.allows_tool(name)}

    def allows_kb(self, name: str) -> bool:
        return self.knowledge_bases is None or name in self.knowledge_bases


class Policy:
    def __init__(self, data: PolicyFile | None, source: str = "(none)"):
        self.data, self.source = data, source
        if data is None:
            log.info("no policy file: single-user mode, every tool and knowledge base allowed")

    @classmethod
    def load(cls, path: Path | None) -> Policy:
        if path is None:
            return cls(None)
        return cls(parse_policy(Path(path).read_text(encoding="utf-8"), str(path)), str(path))

    @property
    def single_user(self) -> bool:
        return self.data is None

    def identify(
        self, user_id: str, *, groups: list[str] | None = None, key_admin: bool = False, claims: dict | None = None
    ) -> UserContext:
        """The UserContext of a named user (interfaces call this with an authenticated id). Admin rights come
        from the keys file (`key_admin`) or the policy; a token's `admin` claim only if the policy trusts claims."""
        claim_admin = bool(
            (claims or {}).get("admin") is True and self.data is not None and self.data.trust_token_claims
        )
        if self.data is None:  # single-user mode: an authenticated caller acts as the owner, but is no admin
            if groups is None:
                return UserContext(user_id=user_id, unrestricted=True, admin=key_admin)
            return UserContext(user_id=user_id, groups=groups, admin=key_admin)
        entry = self.data.users.get(user_id)
        if entry is None:
            return UserContext(user_id=user_id, groups=list(self.data.default_groups), admin=key_admin or claim_admin)
        return UserContext(
            user_id=user_id,
            groups=entry.groups,
            tenant=entry.tenant,
            attributes=entry.attributes,
            admin=key_admin or entry.admin or claim_admin,
        )

    def decide(self, user: UserContext) -> Decision:
        if self.data is None:
            return Decision(
                user,
                None,
                None,
                None if user.unrestricted else list(user.groups),
                rules=["single-user mode"],
                admin=user.admin,
            )
        if user.unrestricted:  # a policy exists: nobody is implicitly unrestricted
            user = user.model_copy(update={"unrestricted": False})
        tools: set[str] = set()
        kbs: set[str] = set()
        tags: list[str] = []
        budgets, limits, exempt, rules = [], [], None, []
        for group in user.groups:
            rule = self.data.groups.get(group)
            if rule is not None and not _conditions_hold(rule.when, user):
                continue  # a failed `when` withholds everything the group gives, its ACL membership too
            tags.append(group)
            if rule is None:  # a group without rules is still a group the ACLs may name
                continue
            rules.append(group)
            tools |= {"*"} if "*" in rule.tools else set(rule.tools)
            kbs |= {"*"} if "*" in rule.knowledge_bases else set(rule.knowledge_bases)
            tags += rule.acl_tags
            budgets.append(rule.token_budget_per_day)
            limits.append(rule.rate_limit_per_min)
            exempt = set(rule.mask_exempt) if exempt is None else exempt & set(rule.mask_exempt)
        # the most generous group wins for grants; unlimited only if every applying group says so
        budget = None if not budgets or None in budgets else max(b for b in budgets if b is not None)
        limit = None if not limits or None in limits else max(n for n in limits if n is not None)
        return Decision(
            user,
            None if "*" in tools else tools,
            None if "*" in kbs else kbs,
            sorted(set(tags)),
            budget,
            limit,
            exempt or set(),
            rules or ["no rule applies"],
            admin=user.admin,
        )


def _conditions_hold(when: dict, user: UserContext) -> bool:
    for key, wanted in when.items():
        value = user.tenant if key == "tenant" else user.attributes.get(key)
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if value not in allowed:
            return False
    return True


def parse_policy(text: str, source: str = "policy") -> PolicyFile:
    """Validate a policy; errors name the line of the offending YAML node."""
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        raise PolicyError([f"{where}: invalid YAML ({getattr(exc, 'problem', exc)})"]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PolicyError([f"{source}:1: the policy must be a mapping with users/groups"])
    try:
        policy = PolicyFile.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{source}:{_line(root, err['loc'])}: {'.'.join(map(str, err['loc']))}: {err['msg']}"
            for err in exc.errors()
        ]
        raise PolicyError(problems) from None
    problems = []
    for name, user in policy.users.items():
        for group in user.groups:
            if group not in policy.groups:
                problems.append(
                    f"{source}:{_line(root, ('users', name, 'groups'))}: users.{name}: group "
                    f"{group!r} has no rule in groups (members would get no tools)"
                )
    if problems:
        raise PolicyError(problems)
    return policy


def _line(node, loc) -> int:
    """1-based line of the deepest YAML node along a pydantic error location."""
    line = node.start_mark.line + 1 if node is not None else 1
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == str(key)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        else:
            nxt = None
        if nxt is None:
            break
        node, line = nxt, nxt.start_mark.line + 1
    return line
