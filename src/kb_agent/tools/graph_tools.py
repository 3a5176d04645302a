"""graph_related: what the knowledge graph links to an entity (ticket key, file, folder, heading, page),
with the exact spans that state each link, following only edges the caller may see."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kb_agent.tools.base import Evidence, Tool, ToolArgsError, ToolContext

_LABEL = {"file": "file", "dir": "folder", "ticket": "ticket", "heading": "heading", "page": "page"}


class GraphInput(BaseModel):
    entity: str = Field(
        min_length=1, max_length=300, description="Ticket key (PROJ-123), file path or name, folder, heading or page id"
    )
    depth: int = Field(default=1, ge=1, le=3, description="How many links away to look")
    max_results: int = Field(default=12, ge=1, le=50)


class GraphRelated(Tool):
    name = "graph_related"
    description = (
        "Knowledge-graph neighbours of an entity: linked tickets (parent, subtask, blocks, clones, "
        "relates), documents linking to or mentioned by a file, folder contents, page hierarchy."
    )
    Input = GraphInput
    timeout_ms = 10_000
    citation_policy = "path:Lx-Ly of the line that states each link"

    def run(self, args: GraphInput, ctx: ToolContext) -> list[Evidence]:
        out: list[Evidence] = []
        seen: set[tuple] = set()
        found_entity = False
        for kb in ctx.kbs:
            graph = kb.graph()
            start = graph.resolve(args.entity)
            if not start:
                continue
            links = graph.neighbours(start, args.depth, ctx.access, limit=args.max_results * 4)
            found_entity = found_entity or bool(links)
            for link in links:
                item = self._evidence(kb, link, ctx)
                if item is not None and item.key not in seen:
                    seen.add(item.key)
                    out.append(item)
        if not found_entity:  # same answer for unknown and invisible entities
            raise ToolArgsError(f"graph_related: nothing linked to {args.entity!r} is visible to the caller")
        return out[: args.max_results]

    def _evidence(self, kb, link: dict, ctx: ToolContext) -> Evidence | None:
        kind, _, name = link["node"].partition(":")
        label = f"{link['head']} --{link['rel']}--> {link['tail']}"
        score = 1.0 / link["hop"]
        if link.get("path"):
            record = kb.catalog.file_by_path(link["path"])
            if record is None or not ctx.access.allows(record.acl):
                return None
            return Evidence(
                source=record.source,
                path=link["path"],
                start_line=link["start_line"],
                end_line=link["end_line"],
                text=link["text"] or "",
                score=score,
                tool=self.name,
                kb=kb.name,
                doc_id=link["path"],
                title=label,
                page=link.get("page"),
                acl=link.get("acl") or [],
                scores={"hop": float(link["hop"])},
            )
        if kind == "file":  # structural edge (folder contains file): show the file's beginning
            record = kb.catalog.file_by_path(name)
            chunks = kb.catalog.chunks_of_source(record.source) if record else []
            if not chunks or not ctx.access.allows(chunks[0].chunk.acl):
                return None
            return Evidence.from_chunk(
                chunks[0].chunk,
                kb=kb.name,
                score=score,
                tool=self.name,
                title=f"{_LABEL.get(kind, kind)} {name} ({label})",
                scores={"hop": float(link["hop"])},
            )
        return None
