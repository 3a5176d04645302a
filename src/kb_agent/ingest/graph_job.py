"""The graph job: after an index run, re-extract the edges of every file whose content or ACL changed.

It runs inside the index run (never on the read path), so a search never waits for extraction."""

from __future__ import annotations

from kb_agent.ingest.graph_extract import extract, link_resolver
from kb_agent.store.base import CatalogReader, KnowledgeBase
from kb_agent.store.catalog import FileRecord


def sync_graph(kb: KnowledgeBase) -> bool:
    """Bring the KB's graph in step with its catalog; True when any edge changed."""
    graph, catalog = kb.graph(), kb.catalog
    if catalog.generation == graph.generation:
        return False
    records = {f.path: f for f in catalog.all_files()}
    stamps = {p: f"{f.file_hash}:{','.join(sorted(f.acl))}" for p, f in records.items()}
    known = graph.stamps()
    changed = [p for p, stamp in stamps.items() if known.get(p) != stamp]
    removed = [p for p in known if p not in records]
    added = [p for p in changed if p not in known]
    if removed or added:  # links into removed files die; dead links may now resolve
        changed += sorted(graph.linking_files(removed) - set(changed))
    extracted = {}
    if changed:
        resolve = link_resolver(set(records), _stems(catalog, records))
        for path in changed:
            chunks = [s.chunk for s in catalog.chunks_of_source(records[path].source)]
            extracted[path] = (stamps[path], extract(path, chunks, resolve))
    graph.replace_files(set(removed + changed), extracted, catalog.generation)
    return bool(changed or removed)


def _stems(catalog: CatalogReader, records: dict[str, FileRecord]) -> dict[str, str]:
    """[[WikiLink]] targets: file stems and document titles."""
    stems: dict[str, str] = {}
    for path in sorted(records, key=len):
        stems.setdefault(path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower(), path)
    by_source = {f.source: p for p, f in records.items()}
    for title, _doc, _first, source in catalog.doc_leads():
        if source in by_source:
            stems.setdefault(title.strip().lower(), by_source[source])
    return stems
