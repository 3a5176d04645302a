"""Who is asking. Interfaces build a UserContext; the engine turns it into the access scope that every
tool and store query carries."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kb_agent.governance.access import AccessFilter


class UserContext(BaseModel):
    user_id: str = "local"
    groups: list[str] = Field(default_factory=list)
    tenant: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)
    unrestricted: bool = Field(default=False, description="single-user owner mode: sees every document")
    admin: bool = Field(
        default=False,
        description="may run admin actions (remote indexing); set from the keys "
        "file or the policy only, never from a token claim the policy does not trust",
    )

    @classmethod
    def local_owner(cls) -> UserContext:
        """Whoever runs the command line on this machine without a policy: sees and administers everything."""
        return cls(user_id="local", unrestricted=True, admin=True)

    def access(self) -> AccessFilter:
        return AccessFilter.unrestricted() if self.unrestricted else AccessFilter.for_groups(self.groups)
