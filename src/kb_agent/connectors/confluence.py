"""Confluence REST client (content API v1, served by Server/Data Center and by Cloud under /wiki)."""

from __future__ import annotations

from dataclasses import dataclass

from kb_agent.connectors.http import ConnectorError, RestClient
from kb_agent.connectors.web import html_to_markdown

EXPAND = "body.storage,ancestors,version,space"


@dataclass
class ConfluencePage:
    id: str
    title: str
    space: str
    url: str
    version: int
    parent_id: str | None
    markdown: str

    def render(self) -> str:
        return f"# {self.title}\n\n{self.markdown.strip()}\n"


class ConfluenceClient:
    def __init__(self, rest: RestClient):
        self.rest = rest

    def page(self, page_id: str) -> ConfluencePage:
        return self._parse(self.rest.get_json(f"/rest/api/content/{page_id}", {"expand": EXPAND}))

    def page_by_title(self, title: str, space: str | None = None) -> ConfluencePage:
        data = self.rest.get_json(
            "/rest/api/content", {"title": title, "spaceKey": space, "expand": EXPAND, "type": "page"}
        )
        results = data.get("results") or []
        if not results:
            raise ConnectorError(f"confluence: no page titled {title!r}" + (f" in space {space}" if space else ""), 404)
        return self._parse(results[0])

    def search(self, cql: str, limit: int = 20) -> list[ConfluencePage]:
        pages: list[ConfluencePage] = []
        start = 0
        while len(pages) < limit:
            data = self.rest.get_json(
                "/rest/api/content/search",
                {"cql": cql, "limit": min(50, limit - len(pages)), "start": start, "expand": EXPAND},
            )
            batch = data.get("results") or []
            pages += [self._parse(r) for r in batch]
            start += len(batch)
            if not batch or not (data.get("_links") or {}).get("next"):
                break
        return pages[:limit]

    def children(self, page_id: str, limit: int = 200) -> list[str]:
        ids: list[str] = []
        start = 0
        while len(ids) < limit:
            data = self.rest.get_json(f"/rest/api/content/{page_id}/child/page", {"start": start, "limit": 50})
            batch = data.get("results") or []
            ids += [str(r["id"]) for r in batch if "id" in r]
            start += len(batch)
            if not batch or not (data.get("_links") or {}).get("next"):
                break
        return ids[:limit]

    def _parse(self, data: dict) -> ConfluencePage:
        if not isinstance(data, dict) or "id" not in data:
            raise ConnectorError("confluence: unexpected page payload (no id)")
        html = ((data.get("body") or {}).get("storage") or {}).get("value", "")
        ancestors = data.get("ancestors") or []
        webui = (data.get("_links") or {}).get("webui", f"/pages/viewpage.action?pageId={data['id']}")
        return ConfluencePage(
            id=str(data["id"]),
            title=data.get("title", ""),
            space=(data.get("space") or {}).get("key", ""),
            url=f"{self.rest.base_url}{webui}",
            version=int((data.get("version") or {}).get("number", 0)),
            parent_id=str(ancestors[-1]["id"]) if ancestors else None,
            markdown=html_to_markdown(html),
        )
