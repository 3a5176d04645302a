"""The knowledge graph of one KB (NetworkX MultiDiGraph), persisted beside the other stores and kept in step
with the catalog file by file: a changed file's edges are replaced, a deleted file's edges removed.

Every edge keeps the ACL of the file that asserts it; traversal only follows edges the caller may see,
so the graph never reveals a restricted document, or that one mentions something."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict
from pathlib import Path

import networkx as nx

from kb_agent.governance.access import AccessFilter
from kb_agent.store.catalog import Catalog
from kb_agent.store.graph_extract import TICKET, Edge, extract, link_resolver, ticket_node


class KnowledgeGraph:
    def __init__(self, folder: Path):
        self.path = folder / "graph.json"
        self.graph = nx.MultiDiGraph()
        self.files: dict[str, str] = {}  # path -> file hash the edges were extracted from
        self.generation = -1
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # missing or torn: rebuilt from the catalog on the next sync
        graph = nx.MultiDiGraph()
        for head, tail, attrs in data.get("edges", []):
            graph.add_edge(head, tail, **attrs)
        self.graph, self.files, self.generation = graph, data.get("files", {}), data.get("generation", -1)

    def save(self) -> None:
        data = {
            "generation": self.generation,
            "files": self.files,
            "edges": [[h, t, attrs] for h, t, attrs in self.graph.edges(data=True)],
        }
        tmp = self.path.with_suffix(".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)

    # -- keeping in step with the catalog ----------------------------------------------------------
    def sync(self, catalog: Catalog) -> bool:
        """Re-extract the files whose content or ACL changed; True when the graph changed."""
        if catalog.generation == self.generation:
            return False
        with self._lock:
            records = {f.path: f for f in catalog.all_files()}
            stamps = {p: f"{f.file_hash}:{','.join(sorted(f.acl))}" for p, f in records.items()}
            changed = [p for p, stamp in stamps.items() if self.files.get(p) != stamp]
            removed = [p for p in self.files if p not in records]
            added = [p for p in changed if p not in self.files]
            if removed or added:  # links into removed files die; dead links may now resolve
                changed += sorted(self._linking_files(removed) - set(changed))
            if changed or removed:
                stems = _stems(catalog, records)
                resolve = link_resolver(set(records), stems)
                self._drop({p for p in removed + changed if p in self.files})
                for path in changed:
                    chunks = [s.chunk for s in catalog.chunks_of_source(records[path].source)]
                    for edge in extract(path, chunks, resolve):
                        self._add(edge, path)
                    self.files[path] = stamps[path]
            self.generation = catalog.generation
            self.save()
            return bool(changed or removed)

    def _linking_files(self, removed: list[str]) -> set[str]:
        gone = {f"file:{p}" for p in removed}
        return {
            by
            for _, tail, data in self.graph.edges(data=True)
            if data.get("rel") in ("links_to", "dead_link") and (tail in gone or data["rel"] == "dead_link")
            for by in [data.get("by")]
            if by and by not in removed
        }

    def _add(self, edge: Edge, asserted_by: str) -> None:
        attrs = asdict(edge)
        head, tail = attrs.pop("head"), attrs.pop("tail")
        self.graph.add_edge(head, tail, by=asserted_by, **attrs)

    def _drop(self, paths: set[str]) -> None:
        """One pass over the edges for all files being replaced or removed."""
        if not paths:
            return
        doomed = [(h, t, k) for h, t, k, by in self.graph.edges(keys=True, data="by") if by in paths]
        touched = {n for h, t, _ in doomed for n in (h, t)}
        self.graph.remove_edges_from(doomed)
        self.graph.remove_nodes_from([n for n in touched if self.graph.degree(n) == 0])
        for path in paths:
            self.files.pop(path, None)

    # -- reading -------------------------------------------------------------------------------------
    def resolve(self, entity: str) -> list[str]:
        """Nodes an entity names: a ticket key, a file path or name, a folder, a heading, a page id."""
        text = entity.strip()
        if TICKET.fullmatch(text.upper()):
            node = ticket_node(text)
            return [node] if node in self.graph else []
        lowered = text.lower().strip("/")
        exact = [
            n
            for n in (f"file:{text}", f"dir:{text.strip('/')}", f"heading:{lowered}", f"page:{text}")
            if n in self.graph
        ]
        if exact:
            return exact
        return sorted(
            n
            for n in self.graph.nodes
            if n.startswith("file:") and n[5:].lower().rsplit("/", 1)[-1].rsplit(".", 1)[0] == lowered
        )

    def neighbours(self, start: list[str], depth: int, access: AccessFilter, limit: int = 50) -> list[dict]:
        """Breadth-first over visible edges, both directions; one record per edge walked."""
        seen, frontier, out = set(start), list(start), []
        for hop in range(1, depth + 1):
            next_frontier = []
            for node in frontier:
                edges = [*self.graph.out_edges(node, data=True), *self.graph.in_edges(node, data=True)]
                for head, tail, attrs in edges:
                    if not access.allows(attrs.get("acl") or []):
                        continue
                    other = tail if head == node else head
                    out.append(
                        {
                            "hop": hop,
                            "from": node,
                            "rel": attrs["rel"],
                            "head": head,
                            "tail": tail,
                            "node": other,
                            **{k: attrs.get(k) for k in ("path", "start_line", "end_line", "text", "acl", "page")},
                        }
                    )
                    if other not in seen:
                        seen.add(other)
                        next_frontier.append(other)
                    if len(out) >= limit:
                        return out
            frontier = next_frontier
        return out


def _stems(catalog: Catalog, records: dict) -> dict[str, str]:
    """[[WikiLink]] targets: file stems and document titles."""
    stems: dict[str, str] = {}
    for path in sorted(records, key=len):
        stems.setdefault(path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower(), path)
    by_source = {f.source: p for p, f in records.items()}
    for title, _doc, _first, source in catalog.doc_leads():
        if source in by_source:
            stems.setdefault(title.strip().lower(), by_source[source])
    return stems
