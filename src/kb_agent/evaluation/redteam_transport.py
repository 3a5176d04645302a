"""Red-team categories at the product's edges, outside the agent:

transport      rebinding Host headers, chunked bodies over the limit, missing/forged/expired credentials,
               a JWT that claims admin, MCP over HTTP without a key
ssrf_ranges    every non-global range, numeric and embedded forms, names that resolve (or re-resolve) to
               private addresses, redirects into them
audit_tamper   each way of rewriting the audit trail, on a copy of the suite's own log
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
import time
from pathlib import Path

import httpx

from kb_agent.evaluation.redteam_edges import EdgeCase

JWT_SECRET = "redteam-jwt-secret-0123456789abcdef"
REBINDING_HOSTS = [
    "evil.example",
    "evil.example:8765",
    "127.0.0.1.nip.io",
    "localhost.evil.com",
    "attacker.test:80",
    "192.168.1.10",
    "0.0.0.0",
    "[::1].evil.example",
    "LOCALHOST.evil",
    "10.0.0.1:8765",
]
NON_GLOBAL_URLS = [
    "http://100.100.100.200/latest/meta-data",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://127.0.0.1:8765/",
    "http://10.0.0.5/",
    "http://172.16.0.1/",
    "http://192.168.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::1]/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://198.18.0.1/",
    "http://192.0.0.8/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
]
PRIVATE_NAMES = {
    "metadata.internal": "169.254.169.254",
    "intranet.corp": "10.0.0.5",
    "cgnat.example": "100.100.100.200",
    "v6.local.example": "fd00::1",
    "loop.example": "127.0.0.1",
}
TAMPERS = [
    "edit",
    "delete",
    "reorder",
    "truncate_tail",
    "append_recomputed",
    "append_wrong_key",
    "rechain",
    "rechain_forged_head",
    "delete_log",
    "empty_log",
    "delete_head",
    "edit_head",
]


class TransportSuite:
    def __init__(self, base: Path, engine_factory, keys_engine_user: str = "eng_user"):
        self.base, self.make_engine, self.user = base, engine_factory, keys_engine_user

    def cases(self, categories: set[str] | None) -> list[EdgeCase]:
        out: list[EdgeCase] = []
        if categories is None or "transport" in categories:
            out += self._transport()
        if categories is None or "ssrf_ranges" in categories:
            out += self._ssrf()
        if categories is None or "audit_tamper" in categories:
            out += self._audit()
        return out

    # -- transport --------------------------------------------------------------------------------
    def _apps(self):
        from kb_agent.interfaces.auth import Authenticator
        from kb_agent.interfaces.http_guard import LOOPBACK_HOSTS
        from kb_agent.interfaces.server import create_app

        keys = self.base / "keys-transport.yaml"
        keys.write_text(f"keys:\n  - {{key: eng-key, user: {self.user}}}\n")
        engine = self.make_engine()
        open_app = create_app(
            engine, Authenticator(None, None, allow_anonymous=True), allowed_hosts=LOOPBACK_HOSTS, max_body_bytes=4000
        )
        keyed_app = create_app(engine, Authenticator(keys, JWT_SECRET), max_body_bytes=4000)
        return open_app, keyed_app, keys

    def _transport(self) -> list[EdgeCase]:
        import jwt
        from fastapi.testclient import TestClient

        open_app, keyed_app, _ = self._apps()
        cases = []
        for host in REBINDING_HOSTS:

            def rebinding(host=host) -> list[str]:
                with TestClient(open_app) as client:
                    response = client.post("/v1/search", json={"query": "handbook"}, headers={"Host": host})
                return [f"{host!r} answered {response.status_code}"] if response.status_code != 403 else []

            cases.append(EdgeCase("transport", "anonymous", f"Host {host}", rebinding))

        def chunked(route: str, app) -> list[str]:
            def body():
                yield b'{"query": "'
                for _ in range(50):
                    yield b"x" * 1000
                yield b'"}'

            with TestClient(app) as client:
                response = client.post(
                    route,
                    content=body(),
                    headers={"Content-Type": "application/json", "X-API-Key": "eng-key", "Host": "localhost"},
                )
            return [f"chunked {route} got {response.status_code}"] if response.status_code != 413 else []

        for route in ("/v1/search", "/v1/query", "/v1/chat/completions"):
            cases.append(EdgeCase("transport", "eng_user", f"chunked {route}", lambda r=route: chunked(r, keyed_app)))
            cases.append(
                EdgeCase("transport", "anonymous", f"chunked {route} (no auth)", lambda r=route: chunked(r, open_app))
            )
        now = int(time.time())
        credentials = {
            "none": {},
            "wrong key": {"X-API-Key": "guess"},
            "wrong secret": {
                "Authorization": "Bearer "
                + jwt.encode({"sub": "hr_user", "exp": now + 60}, "x" * 40, algorithm="HS256")
            },
            "alg none": {
                "Authorization": "Bearer " + jwt.encode({"sub": "hr_user", "exp": now + 60}, None, algorithm="none")  # type: ignore[arg-type]
            },
            "expired": {
                "Authorization": "Bearer "
                + jwt.encode({"sub": "hr_user", "exp": now - 10}, JWT_SECRET, algorithm="HS256")
            },
        }
        for label, headers in credentials.items():
            for method, route, body in (
                ("POST", "/v1/search", {"query": "salary"}),
                ("GET", "/v1/sources", {"path": "corp/hr/salaries.md"}),
            ):

                def unauthenticated(method=method, route=route, body=body, headers=headers) -> list[str]:
                    with TestClient(keyed_app) as client:
                        response = (
                            client.post(route, json=body, headers=headers)
                            if method == "POST"
                            else client.get(route, params=body, headers=headers)
                        )
                    return [f"{route} answered {response.status_code}"] if response.status_code < 400 else []

                cases.append(EdgeCase("transport", "anonymous", f"{label} {route}", unauthenticated))
        admin_claim = jwt.encode({"sub": self.user, "admin": True, "exp": now + 60}, JWT_SECRET, algorithm="HS256")
        for label, headers in (
            ("admin claim", {"Authorization": f"Bearer {admin_claim}"}),
            ("non-admin key", {"X-API-Key": "eng-key"}),
        ):

            def index(headers=headers) -> list[str]:
                with TestClient(keyed_app) as client:
                    response = client.post("/v1/index", json={"paths": [str(self.base)]}, headers=headers)
                return [f"/v1/index answered {response.status_code}"] if response.status_code < 400 else []

            cases.append(EdgeCase("transport", self.user, f"/v1/index with {label}", index))
        cases += [
            EdgeCase("transport", "anonymous", f"MCP {label}", lambda h=h, k=k: self._mcp(h, k))
            for label, h, k in (
                ("no key", {}, True),
                ("wrong key", {"X-API-Key": "nope"}, True),
                ("rebinding host", {"Host": "evil.example"}, False),
            )
        ]
        return cases

    def _mcp(self, headers: dict, keyed: bool) -> list[str]:
        from fastapi.testclient import TestClient

        from kb_agent.interfaces.auth import Authenticator
        from kb_agent.interfaces.http_guard import LOOPBACK_HOSTS
        from kb_agent.interfaces.mcp_server import http_app

        engine = self.make_engine()
        auth = Authenticator(self.base / "keys-transport.yaml", None) if keyed else None
        app = http_app(
            engine,
            auth,
            None,
            fallback=engine.identify(self.user),
            max_body_bytes=4000,
            allowed_hosts=None if keyed else LOOPBACK_HOSTS,
        )
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_knowledge", "arguments": {"query": "salary"}},
        }
        with TestClient(app) as client:
            response = client.post(
                "/mcp", json=request, headers={"Accept": "application/json, text/event-stream", **headers}
            )
        expected = 401 if keyed else 403
        return [f"MCP answered {response.status_code}"] if response.status_code != expected else []

    # -- SSRF -------------------------------------------------------------------------------------
    def _ssrf(self) -> list[EdgeCase]:
        cases = [EdgeCase("ssrf_ranges", "eng_user", url, lambda url=url: self._fetch(url)) for url in NON_GLOBAL_URLS]
        cases += [
            EdgeCase("ssrf_ranges", "eng_user", f"http://{name}/", lambda n=name: self._fetch(f"http://{n}/"))
            for name in PRIVATE_NAMES
        ]
        cases.append(
            EdgeCase(
                "ssrf_ranges",
                "eng_user",
                "rebinding resolver",
                lambda: self._fetch("http://rebind.example/", rebinding=True),
            )
        )
        for target in ("http://169.254.169.254/", "http://intranet.corp/", "http://[::1]:8765/admin"):
            cases.append(
                EdgeCase(
                    "ssrf_ranges",
                    "eng_user",
                    f"redirect to {target}",
                    lambda t=target: self._fetch("http://public.example/start", redirect=t),
                )
            )
        cases += [
            EdgeCase("ssrf_ranges", "eng_user", f"web_fetch tool {url}", lambda url=url: self._tool(url))
            for url in NON_GLOBAL_URLS[:6]
        ]
        return cases

    def _resolver(self, rebinding: bool):
        answers = {
            "rebind.example": ["93.184.216.34", "127.0.0.1"] if rebinding else ["93.184.216.34"],
            "public.example": ["93.184.216.34"],
            **{k: [v] for k, v in PRIVATE_NAMES.items()},
        }

        def resolve(host, port, *args, **kwargs):
            if host not in answers:
                return socket.getaddrinfo(host, port, *args, **kwargs)  # literals and numeric forms, no network
            found = answers[host]
            address = found.pop(0) if len(found) > 1 else found[0]
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

        return resolve

    def _fetch(self, url: str, *, rebinding: bool = False, redirect: str | None = None) -> list[str]:
        from kb_agent.connectors.http import ConnectorError
        from kb_agent.connectors.web import WebFetcher

        reached: list[str] = []

        def handler(request: httpx.Request) -> httpx.Response:
            reached.append(request.url.host)
            if redirect and request.url.path == "/start":
                return httpx.Response(302, headers={"Location": redirect})
            return httpx.Response(200, text="<main>internal metadata</main>", headers={"Content-Type": "text/html"})

        fetcher = WebFetcher(
            allowlist=[],
            max_bytes=10_000,
            timeout_s=2,
            transport=httpx.MockTransport(handler),
            resolver=self._resolver(rebinding),
        )
        with contextlib.suppress(ConnectorError):
            fetcher.fetch(url)
        # the only public address in this suite: anything else reached is a private one
        return [f"connected to {h}" for h in reached if h != "93.184.216.34"]

    def _tool(self, url: str) -> list[str]:
        engine = self.make_engine()
        result = engine.run_tool("web_fetch", {"url": url}, user=engine.identify("hr_user"))
        return [] if result.status == "denied" else [f"web_fetch {url}: {result.status}"]

    # -- audit ------------------------------------------------------------------------------------
    def _audit(self) -> list[EdgeCase]:
        from kb_agent.governance.audit import AuditLog

        source = self.base / "audit-source"
        source.mkdir(exist_ok=True)
        log = AuditLog(source / "audit.jsonl", key="redteam-audit-key-0123456789abcdef")
        for i in range(12):
            log.write("policy_decision", {"action": "answer", "decision": "allow", "n": i}, trace_id=f"t{i}")
        return [EdgeCase("audit_tamper", "attacker", kind, lambda k=kind: self._tamper(source, k)) for kind in TAMPERS]

    def _tamper(self, source: Path, kind: str) -> list[str]:
        from kb_agent.governance.audit import AuditLog, _canonical

        folder = self.base / f"audit-{kind}"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, folder)
        log = AuditLog(folder / "audit.jsonl", key="redteam-audit-key-0123456789abcdef")
        lines = log.path.read_text().splitlines()
        records = [json.loads(line) for line in lines]

        def resign(rows: list[dict], key: bytes | None = None) -> list[str]:
            previous, out = "0" * 64, []
            for seq, row in enumerate(rows, start=1):
                row = {**row, "seq": seq, "prev": previous}
                row["hash"] = (
                    hashlib.sha256(_canonical(row)).hexdigest()
                    if key is None
                    else __import__("hmac").new(key, _canonical(row), hashlib.sha256).hexdigest()
                )
                previous = row["hash"]
                out.append(json.dumps(row))
            return out

        forged = {**records[-1], "decision": "allow-all", "seq": len(records) + 1, "prev": records[-1]["hash"]}
        if kind == "edit":
            records[3]["decision"] = "deny"
            lines[3] = json.dumps(records[3])
        elif kind == "delete":
            del lines[4]
        elif kind == "reorder":
            lines[2], lines[5] = lines[5], lines[2]
        elif kind == "truncate_tail":
            lines = lines[:-3]
        elif kind == "append_recomputed":
            forged["hash"] = hashlib.sha256(_canonical(forged)).hexdigest()
            lines.append(json.dumps(forged))
        elif kind == "append_wrong_key":
            lines = [*lines, resign([*records, forged], b"guessed-key")[-1]]
        elif kind == "rechain":
            records[1]["decision"] = "deny"
            lines = resign(records)
        elif kind == "rechain_forged_head":
            lines = resign(records[:6])
            last = json.loads(lines[-1])["hash"]
            log.head_path.write_text(
                json.dumps({"count": 6, "last": last, "mac": hashlib.sha256(f"head:6:{last}".encode()).hexdigest()})
            )
        elif kind == "delete_head":
            log.head_path.unlink()
        elif kind == "edit_head":
            head = json.loads(log.head_path.read_text())
            log.head_path.write_text(json.dumps({**head, "count": head["count"] - 2}))
            lines = lines[:-2]
        if kind == "delete_log":
            log.path.unlink()
        elif kind == "empty_log":
            log.path.write_text("")
        else:
            log.path.write_text("".join(line + "\n" for line in lines))
        return [] if not log.verify().ok else [f"verify accepted a log after {kind}"]
