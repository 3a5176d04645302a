"""The knowledge graph of one KB (NetworkX MultiDiGraph), persisted beside the other stores.

The ingest job `kb_agent.ingest.graph_job` keeps it in step with the catalog file by file (a changed file's
edges replaced, a deleted file's removed); readers only load it, and never write.

Every edge keeps the ACL of the file that asserts it; traversal only follows edges the caller may see,
so the graph never reveals a restricted document, or that one mentions something."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

import networkx as nx

from kb_agent.governance.access import AccessFilter

TICKET = re.compile(r"\b([A-Z][A-Z0-9]{1,9}-\d{1,7})\b")


@dataclass
class Edge:
    head: str
    rel: str
    tail: str
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    text: str = ""  # the exact line(s) asserting it
    acl: list[str] = field(default_factory=list)
    page: int | None = None


def ticket_node(key: str) -> str:
    return f"ticket:{key.upper()}"


class KnowledgeGraph:
    def __init__(self, folder: Path):
        self.path = folder / "graph.json"
        self.graph = nx.MultiDiGraph()
        self.files: dict[str, str] = {}  # path -> file hash the edges were extracted from
        self.generation = -1
        self._lock = threading.Lock()
        self._mtime = self._stat()
        self._load()

    def _stat(self) -> float:
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0

    def reload_if_changed(self) -> None:
        """A reader picks up what an index run (maybe in another process) wrote."""
        mtime = self._stat()
        if mtime != self._mtime:
            self._mtime = mtime
            self._load()

    # where the graph is kept: a file here; a backend may keep it elsewhere (`_stat`, `_read`, `_write`)
    def _read(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def _write(self, text: str) -> None:
        tmp = self.path.with_suffix(".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(self.path)

    def _load(self) -> None:
        try:
            data = json.loads(self._read())
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
        self._write(json.dumps(data, ensure_ascii=False))

    def copy_from(self, other: KnowledgeGraph, generation: int) -> None:
        """Take over another store's edges (a migration: same files, so the same edges)."""
        with self._lock:
            self.graph, self.files, self.generation = other.graph.copy(), dict(other.files), generation
            self.save()
            self._mtime = self._stat()

    # -- writing (the ingest graph job only) ---------------------------------------------------------
    def stamps(self) -> dict[str, str]:
        """path -> the file hash and ACL its edges were extracted from."""
        return dict(self.files)

    def linking_files(self, removed: list[str]) -> set[str]:
        """Files whose links point into `removed` files, or that hold dead links (they may resolve now)."""
        gone = {f"file:{p}" for p in removed}
        return {
            by
            for _, tail, data in self.graph.edges(data=True)
            if data.get("rel") in ("links_to", "dead_link") and (tail in gone or data["rel"] == "dead_link")
            for by in [data.get("by")]
            if by and by not in removed
        }

    def replace_files(self, dropped: set[str], extracted: dict[str, tuple[str, list[Edge]]], generation: int) -> None:
        """Drop the edges of `dropped` files, add each extracted file's edges, record the catalog generation."""
        with self._lock:
            self._drop(dropped & set(self.files))
            for path, (stamp, edges) in extracted.items():
                for edge in edges:
                    self._add(edge, path)
                self.files[path] = stamp
            self.generation = generation
            self.save()
            self._mtime = self._stat()

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
