"""Live connector tools: Jira, Confluence and web pages fetched at question time (realtime freshness).

Credentials stay inside the connector call; evidence cites the rendered page as `jira/KEY.md:Lx-Ly`
(the same text `index_command` stores), with the page URL as the source."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator

from kb_agent.connectors.http import ConnectorError
from kb_agent.connectors.web import FetchDenied
from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext, ToolDenied

_BLOCK_CHARS = 1200
TICKET_PATTERN = r"^[A-Z][A-Z0-9]{1,9}-\d{1,7}$"


def text_evidence(text: str, *, path: str, source: str, tool: str, title: str) -> list[Evidence]:
    """Paragraph blocks of rendered text (about _BLOCK_CHARS each), each with its exact line range."""
    lines = text.split("\n")
    out: list[Evidence] = []
    first: int | None = None
    last, size = 0, 0

    def emit(a: int, b: int) -> None:
        out.append(
            Evidence(
                source=source,
                path=path,
                start_line=a + 1,
                end_line=b + 1,
                text="\n".join(lines[a : b + 1]),
                score=1.0,
                tool=tool,
                title=title,
                doc_id=path,
            )
        )

    for i, line in enumerate(lines):
        if line.strip():
            first = i if first is None else first
            last, size = i, size + len(line) + 1
        elif first is not None and size >= _BLOCK_CHARS:
            emit(first, last)
            first, size = None, 0
    if first is not None:
        emit(first, last)
    return out


def _connectors(ctx: ToolContext):
    services = ctx.services
    if services is None or getattr(services, "connectors", None) is None:
        raise ToolArgsError("connectors are not available in this context")
    return services.connectors


def _call(fn):
    try:
        return fn()
    except FetchDenied as exc:
        raise ToolDenied(str(exc)) from None
    except ConnectorError as exc:
        if exc.status in (401, 403):
            raise ToolDenied(str(exc)) from None
        raise ToolArgsError(str(exc)) from None


def issue_path(issue) -> str:
    return f"jira/{issue.key}.md"


def page_path(page) -> str:
    return f"confluence/{page.space or 'space'}/{page.id}.md"


def _issue_evidence(issue, tool: str) -> list[Evidence]:
    return text_evidence(
        issue.render(), path=issue_path(issue), source=issue.url, tool=tool, title=f"{issue.key}: {issue.summary}"
    )


def _page_evidence(page, tool: str) -> list[Evidence]:
    return text_evidence(page.render(), path=page_path(page), source=page.url, tool=tool, title=page.title)


class JiraKeyInput(BaseModel):
    key: str = Field(pattern=TICKET_PATTERN, description="Ticket key, e.g. PROJ-123")


class JiraFetch(Tool):
    name = "jira_fetch"
    description = "Fetch one Jira ticket live: summary, status, fields, links, subtasks, description, comments."
    Input = JiraKeyInput
    auth_scope = ("jira.read",)
    freshness = "realtime"
    timeout_ms = 20_000
    rate_limit_per_min = 60
    citation_policy = "jira/KEY.md:Lx-Ly of the rendered ticket; source = ticket URL"

    def run(self, args: JiraKeyInput, ctx: ToolContext) -> list[Evidence]:
        return _issue_evidence(_call(lambda: _connectors(ctx).jira().issue(args.key)), self.name)


class JqlInput(BaseModel):
    jql: str = Field(min_length=1, max_length=2000, description='JQL, e.g. project = PROJ AND text ~ "login"')
    max_results: int = Field(default=10, ge=1, le=100)


class JiraSearch(Tool):
    name = "jira_search"
    description = "Search Jira live with JQL; returns each matching ticket's summary block."
    Input = JqlInput
    auth_scope = ("jira.read",)
    freshness = "realtime"
    rate_limit_per_min = 30
    citation_policy = "jira/KEY.md:Lx-Ly of the rendered ticket; source = ticket URL"

    def run(self, args: JqlInput, ctx: ToolContext) -> list[Evidence]:
        issues = _call(lambda: _connectors(ctx).jira().search(args.jql, args.max_results))
        return [block for issue in issues for block in _issue_evidence(issue, self.name)[:1]]


class ConfluencePageInput(BaseModel):
    page_id: str | None = Field(default=None, pattern=r"^\d{1,20}$")
    title: str | None = Field(default=None, min_length=1, max_length=300)
    space: str | None = Field(default=None, max_length=100)

    @model_validator(mode="after")
    def _one_of(self):
        if bool(self.page_id) == bool(self.title):
            raise ValueError("give exactly one of page_id or title")
        return self


class ConfluenceFetch(Tool):
    name = "confluence_fetch"
    description = "Fetch one Confluence page live (by page_id, or by title and optional space) as Markdown."
    Input = ConfluencePageInput
    auth_scope = ("confluence.read",)
    freshness = "realtime"
    rate_limit_per_min = 60
    citation_policy = "confluence/SPACE/ID.md:Lx-Ly of the rendered page; source = page URL"

    def run(self, args: ConfluencePageInput, ctx: ToolContext) -> list[Evidence]:
        client = _call(lambda: _connectors(ctx).confluence())
        page = _call(
            lambda: client.page(args.page_id) if args.page_id else client.page_by_title(args.title, args.space)
        )
        return _page_evidence(page, self.name)


class CqlInput(BaseModel):
    cql: str = Field(min_length=1, max_length=2000, description='CQL, e.g. space = HR AND text ~ "leave"')
    max_results: int = Field(default=10, ge=1, le=50)


class ConfluenceSearch(Tool):
    name = "confluence_search"
    description = "Search Confluence live with CQL; returns the opening block of each matching page."
    Input = CqlInput
    auth_scope = ("confluence.read",)
    freshness = "realtime"
    rate_limit_per_min = 30
    citation_policy = "confluence/SPACE/ID.md:Lx-Ly of the rendered page; source = page URL"

    def run(self, args: CqlInput, ctx: ToolContext) -> list[Evidence]:
        pages = _call(lambda: _connectors(ctx).confluence().search(args.cql, args.max_results))
        return [block for page in pages for block in _page_evidence(page, self.name)[:1]]


class UrlInput(BaseModel):
    url: str = Field(min_length=8, max_length=2000, pattern=r"^https?://", description="http(s) URL")


def web_path(url: str) -> str:
    parts = urlsplit(url)
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in (parts.path.strip("/") or "index"))[:120]
    return f"web/{parts.hostname}/{slug}.md"


class WebFetch(Tool):
    name = "web_fetch"
    description = "Fetch a public web page and read its main content as Markdown (private addresses refused)."
    Input = UrlInput
    auth_scope = ("web.read",)
    freshness = "realtime"
    rate_limit_per_min = 30
    citation_policy = "web/HOST/PAGE.md:Lx-Ly of the rendered page; source = final URL"

    def run(self, args: UrlInput, ctx: ToolContext) -> list[Evidence]:
        if ctx.allowed_urls is not None and args.url not in ctx.allowed_urls:
            # a URL that only retrieved text (or the model) names must not spend the caller's egress
            raise ToolDenied("web_fetch: only a URL the question itself contains may be fetched")
        page = _call(lambda: _connectors(ctx).web().fetch(args.url))
        return text_evidence(
            page.render(), path=web_path(page.final_url), source=page.final_url, tool=self.name, title=page.title
        )
