"""Jira REST client: Server/Data Center (/rest/api/2, startAt paging) and Cloud (/rest/api/3, ADF bodies,
nextPageToken paging on /search/jql)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kb_agent.connectors.http import ConnectorError, RestClient

FIELDS = (
    "summary,description,status,issuetype,priority,assignee,reporter,created,updated,parent,subtasks,"
    "issuelinks,comment,labels,fixVersions,resolution"
)


@dataclass
class JiraIssue:
    key: str
    url: str
    summary: str = ""
    status: str = ""
    issue_type: str = ""
    priority: str = ""
    assignee: str = ""
    reporter: str = ""
    created: str = ""
    updated: str = ""
    resolution: str = ""
    description: str = ""
    parent: str | None = None
    subtasks: list[str] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)  # {"type": "blocks", "key": "X-1"}
    labels: list[str] = field(default_factory=list)
    fix_versions: list[str] = field(default_factory=list)
    comments: list[dict] = field(default_factory=list)  # {"author", "created", "body"}

    def render(self) -> str:
        """Markdown: what the agent reads and what index_command stores (citations point at these lines)."""
        lines = [
            f"# {self.key}: {self.summary}",
            "",
            f"Status: {self.status} · Type: {self.issue_type} · Priority: {self.priority or '-'}"
            f" · Resolution: {self.resolution or 'Unresolved'}",
            f"Assignee: {self.assignee or '-'} · Reporter: {self.reporter or '-'}"
            f" · Created: {self.created} · Updated: {self.updated}",
        ]
        if self.fix_versions:
            lines.append(f"Fix versions: {', '.join(self.fix_versions)}")
        if self.parent:
            lines.append(f"Parent: {self.parent}")
        if self.subtasks:
            lines.append(f"Subtasks: {', '.join(self.subtasks)}")
        for link in self.links:
            lines.append(f"Link: {link['type']} {link['key']}")
        if self.description:
            lines += ["", "## Description", "", *self.description.strip().split("\n")]
        if self.comments:
            lines += ["", "## Comments"]
            for c in self.comments:
                lines += ["", f"**{c['author']}** ({c['created']}):", *c["body"].strip().split("\n")]
        return "\n".join(lines) + "\n"


def adf_to_text(node) -> str:
    """Atlassian Document Format (Cloud v3 bodies) to plain text with paragraph breaks."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "".join(adf_to_text(n) for n in node)
    kind = node.get("type")
    if kind == "text":
        return node.get("text", "")
    if kind == "hardBreak":
        return "\n"
    if kind in ("mention", "emoji"):
        return node.get("attrs", {}).get("text", "")
    inner = adf_to_text(node.get("content", []))
    if kind in ("paragraph", "heading", "codeBlock", "blockquote", "rule"):
        return inner + "\n\n"
    if kind == "listItem":
        return "- " + inner.strip() + "\n"
    return inner


def _name(person) -> str:
    return (person or {}).get("displayName") or (person or {}).get("name") or ""


class JiraClient:
    def __init__(self, rest: RestClient, deployment: Literal["server", "cloud"]):
        self.rest, self.deployment = rest, deployment
        self.api = "/rest/api/3" if deployment == "cloud" else "/rest/api/2"

    def issue(self, key: str) -> JiraIssue:
        data = self.rest.get_json(f"{self.api}/issue/{key}", {"fields": FIELDS})
        return self._parse(data)

    def search(self, jql: str, max_results: int = 20) -> list[JiraIssue]:
        issues: list[JiraIssue] = []
        if self.deployment == "cloud":
            token = None
            while len(issues) < max_results:
                page = self.rest.get_json(
                    f"{self.api}/search/jql",
                    {
                        "jql": jql,
                        "fields": FIELDS,
                        "maxResults": min(100, max_results - len(issues)),
                        "nextPageToken": token,
                    },
                )
                issues += [self._parse(i) for i in page.get("issues", [])]
                token = page.get("nextPageToken")
                if not token or page.get("isLast") or not page.get("issues"):
                    break
        else:
            start = 0
            while len(issues) < max_results:
                page = self.rest.get_json(
                    f"{self.api}/search",
                    {"jql": jql, "fields": FIELDS, "startAt": start, "maxResults": min(100, max_results - len(issues))},
                )
                batch = page.get("issues", [])
                issues += [self._parse(i) for i in batch]
                start += len(batch)
                if not batch or start >= int(page.get("total", 0)):
                    break
        return issues[:max_results]

    def _parse(self, data: dict) -> JiraIssue:
        if not isinstance(data, dict) or "key" not in data:
            raise ConnectorError("jira: unexpected issue payload (no key)")
        f = data.get("fields") or {}
        text = adf_to_text if self.deployment == "cloud" else (lambda v: v or "")
        links = []
        for link in f.get("issuelinks") or []:
            kind = link.get("type") or {}
            if link.get("outwardIssue"):
                links.append(
                    {"type": (kind.get("outward") or kind.get("name") or "relates"), "key": link["outwardIssue"]["key"]}
                )
            elif link.get("inwardIssue"):
                links.append(
                    {"type": (kind.get("inward") or kind.get("name") or "relates"), "key": link["inwardIssue"]["key"]}
                )
        comments = [
            {"author": _name(c.get("author")), "created": c.get("created", ""), "body": text(c.get("body")).strip()}
            for c in ((f.get("comment") or {}).get("comments") or [])
        ]
        return JiraIssue(
            key=data["key"],
            url=f"{self.rest.base_url}/browse/{data['key']}",
            summary=f.get("summary") or "",
            status=(f.get("status") or {}).get("name", ""),
            issue_type=(f.get("issuetype") or {}).get("name", ""),
            priority=(f.get("priority") or {}).get("name", ""),
            assignee=_name(f.get("assignee")),
            reporter=_name(f.get("reporter")),
            created=f.get("created") or "",
            updated=f.get("updated") or "",
            resolution=(f.get("resolution") or {}).get("name", ""),
            description=text(f.get("description")).strip(),
            parent=(f.get("parent") or {}).get("key"),
            subtasks=[s["key"] for s in f.get("subtasks") or []],
            links=links,
            labels=list(f.get("labels") or []),
            fix_versions=[v.get("name", "") for v in f.get("fixVersions") or []],
            comments=comments,
        )
