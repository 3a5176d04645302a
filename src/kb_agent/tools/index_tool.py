"""index_command (the original's `/index`): bring a web page, a Jira ticket (with its subtasks and linked
tickets) or a Confluence page tree into a knowledge base, readable by the caller's groups only.

Fetched content is written as Markdown (front matter keeps ticket relations and page parents for the
knowledge graph) under the data folder, in a folder whose `.kbacl` holds the caller's groups, then indexed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from kb_agent.connectors.jira import JiraIssue
from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext, ToolDenied
from kb_agent.tools.connector_tools import TICKET_PATTERN, _call, _connectors, issue_path, page_path, web_path

_CONFLUENCE = re.compile(r"^confluence:(?:(\d{1,20})|(.+))$")
_PAGE_ID_IN_URL = re.compile(r"[?&]pageId=(\d+)|/pages/(\d+)")
_LINK_FIELDS = {
    "blocks": "blocks",
    "is blocked by": "blocked_by",
    "clones": "clones",
    "is cloned by": "cloned_by",
    "duplicates": "duplicates",
    "is duplicated by": "duplicated_by",
}


class IndexInput(BaseModel):
    target: str = Field(
        min_length=3, max_length=2000, description="URL, Jira key (PROJ-1) or confluence:PAGE_ID / confluence:Title"
    )
    kb: str | None = Field(default=None, max_length=64, description="Knowledge base (default: the first searched)")
    include_children: bool = Field(default=True, description="Subtasks and links / child pages too")
    max_items: int = Field(default=25, ge=1, le=200)


class IndexCommand(Tool):
    name = "index_command"
    description = (
        "Index a web page, a Jira ticket (with subtasks and linked tickets) or a Confluence page tree "
        "into a knowledge base, visible to the caller's groups."
    )
    Input = IndexInput
    auth_scope = ("kb.write",)
    freshness = "near-realtime"
    timeout_ms = 120_000
    rate_limit_per_min = 10
    citation_policy = "path:Lx-Ly of the stored Markdown copy"

    def run(self, args: IndexInput, ctx: ToolContext) -> list[Evidence]:
        services = ctx.services
        if services is None or getattr(services, "index_folder", None) is None:
            raise ToolArgsError("index_command: indexing is not available in this context")
        kb = args.kb or (ctx.kbs[0].name if ctx.kbs else ctx.settings.default_kb)
        groups = sorted(set(ctx.groups))
        if ctx.access.restricted and not groups:  # content would otherwise become public
            raise ToolDenied("index_command: the caller belongs to no group to scope the indexed content to")
        scope = (
            "public"
            if not ctx.access.restricted
            else "groups-" + hashlib.sha256(",".join(groups).encode()).hexdigest()[:12]
        )
        folder: Path = ctx.settings.data_folder / "connectors" / kb / scope
        if scope != "public":
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".kbacl").write_text("\n".join(groups) + "\n", encoding="utf-8")
        written = self._fetch_into(args, ctx, folder)
        report = services.index_folder(folder, kb)
        return [
            Evidence(
                source=str(path),
                path=f"{scope}/{path.relative_to(folder).as_posix()}",
                start_line=1,
                end_line=1,
                text=f"indexed {path.relative_to(folder).as_posix()} into {kb}: {report}",
                tool=self.name,
                kb=kb,
                title="index_command",
            )
            for path in written
        ]

    def _fetch_into(self, args: IndexInput, ctx: ToolContext, folder: Path) -> list[Path]:
        target = args.target.strip()
        connectors = _connectors(ctx)
        if re.fullmatch(TICKET_PATTERN, target):
            return self._jira(connectors, target, args, folder)
        match = _CONFLUENCE.match(target)
        url_page = (
            _PAGE_ID_IN_URL.search(target)
            if connectors.settings.confluence_url and target.startswith(connectors.settings.confluence_url.rstrip("/"))
            else None
        )
        if match or url_page:
            client = _call(connectors.confluence)
            if url_page:
                root = _call(lambda: client.page(url_page.group(1) or url_page.group(2)))
            else:
                title_match = match
                assert title_match is not None  # `match or url_page` above
                root = _call(
                    lambda: (
                        client.page(title_match.group(1))
                        if title_match.group(1)
                        else client.page_by_title(title_match.group(2))
                    )
                )
            return self._confluence(client, root, args, folder)
        if target.startswith(("http://", "https://")):
            page = _call(lambda: connectors.web().fetch(target))
            return [
                _write(
                    folder / web_path(page.final_url),
                    {"title": page.title, "source_url": page.final_url},
                    page.render(),
                )
            ]
        raise ToolArgsError("index_command: target must be a URL, a Jira key or confluence:PAGE_ID|Title")

    def _jira(self, connectors, key: str, args: IndexInput, folder: Path) -> list[Path]:
        client = _call(connectors.jira)
        root = _call(lambda: client.issue(key))
        issues = [root]
        if args.include_children:
            for other in [*root.subtasks, *(link["key"] for link in root.links)][: args.max_items - 1]:
                issues.append(_call(lambda other=other: client.issue(other)))
        return [_write(folder / issue_path(issue), _ticket_front_matter(issue), issue.render()) for issue in issues]

    def _confluence(self, client, root, args: IndexInput, folder: Path) -> list[Path]:
        pages, queue = [root], [root.id] if args.include_children else []
        while queue and len(pages) < args.max_items:
            for child_id in _call(lambda: client.children(queue.pop(0))):
                if len(pages) >= args.max_items:
                    break
                child = _call(lambda child_id=child_id: client.page(child_id))
                pages.append(child)
                queue.append(child.id)
        return [
            _write(
                folder / page_path(p),
                {"title": p.title, "confluence_id": p.id, "confluence_parent": p.parent_id or "", "source_url": p.url},
                p.render(),
            )
            for p in pages
        ]


def _ticket_front_matter(issue: JiraIssue) -> dict:
    meta: dict = {"title": f"{issue.key}: {issue.summary}", "issue_key": issue.key, "source_url": issue.url}
    if issue.parent:
        meta["parent"] = issue.parent
    if issue.subtasks:
        meta["subtasks"] = issue.subtasks
    for link in issue.links:
        field = _LINK_FIELDS.get(link["type"].lower(), "relates")
        meta.setdefault(field, []).append(link["key"])
    return meta


def _write(path: Path, front_matter: dict, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {k: v for k, v in front_matter.items() if v not in ("", None, [])}
    text = "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n" + body
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
