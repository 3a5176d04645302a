"""A local HTTP server shaped like Jira (Server v2 and Cloud v3), Confluence and plain web pages:
real sockets and real payload shapes (fields, pagination, error bodies), no patched client methods."""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "s3cr3t-token-value"


def _issue(key, summary, *, description="", parent=None, subtasks=(), links=(), cloud=False, comments=()):
    desc = (
        {
            "type": "doc",
            "version": 1,
            "content": [{"type": "paragraph", "content": [{"type": "text", "text": description}]}],
        }
        if cloud
        else description
    )
    return {
        "id": "1",
        "key": key,
        "fields": {
            "summary": summary,
            "description": desc,
            "status": {"name": "In Progress"},
            "issuetype": {"name": "Story"},
            "priority": {"name": "High"},
            "assignee": {"displayName": "Ada"},
            "reporter": {"displayName": "Bob"},
            "created": "2026-01-02T10:00:00.000+0000",
            "updated": "2026-01-03T10:00:00.000+0000",
            "resolution": None,
            "labels": ["payments"],
            "fixVersions": [{"name": "2.4"}],
            "parent": {"key": parent} if parent else None,
            "subtasks": [{"key": k, "fields": {"summary": "sub"}} for k in subtasks],
            "issuelinks": [
                {"type": {"name": "Blocks", "inward": "is blocked by", "outward": "blocks"}, "outwardIssue": {"key": k}}
                for k in links
            ],
            "comment": {
                "comments": [
                    {
                        "author": {"displayName": "Cy"},
                        "created": "2026-01-04",
                        "body": (
                            {
                                "type": "doc",
                                "content": [{"type": "paragraph", "content": [{"type": "text", "text": c}]}],
                            }
                            if cloud
                            else c
                        ),
                    }
                    for c in comments
                ]
            },
        },
    }


ISSUES = {
    "PROJ-1": dict(
        summary="Card payments fail on retry",
        description="Retries double-charge the card.",
        subtasks=["PROJ-2"],
        links=["PROJ-3"],
        comments=["Fixed in 2.4 by idempotency keys."],
    ),
    "PROJ-2": dict(summary="Add idempotency keys", description="Subtask of the payment fix.", parent="PROJ-1"),
    "PROJ-3": dict(summary="Release 2.4", description="Blocked until payments are fixed."),
}
PAGE_HTML = (
    "<html><head><title>Leave policy</title></head><body><nav>Home | Menu</nav><main><h1>Leave policy</h1>"
    "<p>Employees get <b>25 days</b> of paid leave.</p><ul><li>Carry over up to 5 days.</li></ul>"
    "<script>alert(1)</script></main><footer>(c) corp</footer></body></html>"
)
PAGES = {
    "100": {"title": "HR Handbook", "html": "<p>Welcome to HR.</p>", "ancestors": []},
    "101": {
        "title": "Leave",
        "html": "<h2>Annual leave</h2><p>25 days of paid leave per year.</p>",
        "ancestors": [{"id": "100"}],
    },
    "102": {"title": "Expenses", "html": "<p>Submit receipts within 30 days.</p>", "ancestors": [{"id": "100"}]},
}


def _page(page_id):
    p = PAGES[page_id]
    return {
        "id": page_id,
        "type": "page",
        "title": p["title"],
        "space": {"key": "HR"},
        "version": {"number": 3},
        "ancestors": p["ancestors"],
        "body": {"storage": {"value": p["html"], "representation": "storage"}},
        "_links": {"webui": f"/spaces/HR/pages/{page_id}"},
    }


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status, body, headers=None, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        self.server.hits[path] += 1
        if path.startswith("/web/"):
            return self._web(path)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(
                401, {"errorMessages": ["You are not authenticated. Authentication required."], "errors": {}}
            )
        if path.startswith("/rest/api/2/issue/") or path.startswith("/rest/api/3/issue/"):
            return self._issue(path.rsplit("/", 1)[1], cloud="/3/" in path)
        if path == "/rest/api/2/search":
            keys = sorted(ISSUES)
            start, size = int(q.get("startAt", 0)), min(int(q.get("maxResults", 50)), 2)  # pages of 2
            batch = keys[start : start + size]
            return self._send(
                200,
                {
                    "startAt": start,
                    "maxResults": size,
                    "total": len(keys),
                    "issues": [_issue(k, **ISSUES[k]) for k in batch],
                },
            )
        if path == "/rest/api/3/search/jql":
            keys = sorted(ISSUES)
            start = int(q.get("nextPageToken") or 0)
            batch = keys[start : start + 2]
            body = {"issues": [_issue(k, cloud=True, **ISSUES[k]) for k in batch]}
            if start + 2 < len(keys):
                body["nextPageToken"] = str(start + 2)
            return self._send(200, body)
        if path.startswith("/rest/api/content"):
            return self._confluence(path, q)
        return self._send(404, {"message": "No route"})

    def _issue(self, key, cloud):
        if key == "REFLECT-1":  # a misbehaving proxy or error page that echoes the request headers
            return self._send(400, {"errorMessages": [f"bad request, headers were: {dict(self.headers)}"]})
        if key == "REFLECT-2":
            return self._send(
                500,
                f"<html>Authorization: {self.headers.get('Authorization')}</html>".encode(),
                content_type="text/html",
            )
        if key == "REDIR-1":  # a redirect off the configured host
            port = self.server.server_address[1]
            return self._send(302, b"", {"Location": f"http://localhost:{port}/rest/api/2/issue/PROJ-1"})
        if key == "SECRET-1":
            return self._send(403, {"errorMessages": ["You do not have permission to see this issue."], "errors": {}})
        if key == "BUSY-1":
            self.server.busy += 1
            if self.server.busy == 1:
                return self._send(429, {"errorMessages": ["Rate limit exceeded."]}, {"Retry-After": "1"})
            return self._send(200, _issue("BUSY-1", "Finally answered"))
        if key == "SLOW-1":
            return self._send(429, {"errorMessages": ["Rate limit exceeded."]}, {"Retry-After": "3600"})
        if key not in ISSUES:
            return self._send(
                404, {"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}
            )
        return self._send(200, _issue(key, cloud=cloud, **ISSUES[key]))

    def _confluence(self, path, q):
        parts = path.strip("/").split("/")  # rest api content [id] [child page]
        if path == "/rest/api/content/search":
            ids = sorted(PAGES)
            start, limit = int(q.get("start", 0)), min(int(q.get("limit", 25)), 2)
            batch = ids[start : start + limit]
            links = {"next": f"/rest/api/content/search?start={start + limit}"} if start + limit < len(ids) else {}
            return self._send(
                200,
                {
                    "results": [_page(i) for i in batch],
                    "start": start,
                    "limit": limit,
                    "size": len(batch),
                    "_links": links,
                },
            )
        if path == "/rest/api/content":
            found = [i for i, p in PAGES.items() if p["title"] == q.get("title")]
            return self._send(200, {"results": [_page(i) for i in found], "size": len(found)})
        if len(parts) == 6 and parts[4:] == ["child", "page"]:
            children = sorted(i for i, p in PAGES.items() if p["ancestors"] and p["ancestors"][-1]["id"] == parts[3])
            start = int(q.get("start", 0))
            batch = children[start : start + 1]  # one per page: pagination is exercised
            links = {"next": "more"} if start + 1 < len(children) else {}
            return self._send(200, {"results": [{"id": i, "title": PAGES[i]["title"]} for i in batch], "_links": links})
        if len(parts) == 4 and parts[3] in PAGES:
            return self._send(200, _page(parts[3]))
        return self._send(404, {"statusCode": 404, "message": "No content found with id: " + parts[-1]})

    def _web(self, path):
        if path == "/web/page.html":
            return self._send(200, PAGE_HTML.encode(), content_type="text/html; charset=utf-8")
        if path == "/web/redirect":
            return self._send(302, b"", {"Location": "/web/page.html"})
        if path == "/web/big":
            return self._send(200, b"<p>" + b"x" * 3_000_000 + b"</p>", content_type="text/html")
        if path == "/web/slow":
            import time

            time.sleep(3)
            return self._send(200, b"<p>late</p>", content_type="text/html")
        if path == "/web/image.png":
            return self._send(200, b"\x89PNG", content_type="image/png")
        return self._send(404, b"not found", content_type="text/plain")


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.hits: Counter = Counter()
        self.busy = 0
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()
