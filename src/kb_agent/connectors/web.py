"""web_fetch: one page as Markdown (main content only), with size and time limits and an SSRF guard.

Private, loopback, link-local, multicast and reserved addresses are refused unless the host (or its
network) is on the allow-list; every redirect hop is checked again."""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx
from bs4 import BeautifulSoup
from markdownify import markdownify

from kb_agent.connectors.http import ConnectorError

_NOISE = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "svg", "button")
_BLANKS = re.compile(r"\n{3,}")


class FetchDenied(ConnectorError):
    pass


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    soup = BeautifulSoup(html or "", "lxml")
    for tag in soup(list(_NOISE)):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.find(attrs={"role": "main"}) or soup.body or soup
    if base_url:
        for link in main.find_all("a", href=True):
            link["href"] = urljoin(base_url, link["href"])
    text = markdownify(str(main), heading_style="ATX", bullets="-", strip=["img"])
    return _BLANKS.sub("\n\n", "\n".join(line.rstrip() for line in text.split("\n"))).strip()


@dataclass
class WebPage:
    url: str
    final_url: str
    title: str
    markdown: str

    def render(self) -> str:
        return f"# {self.title or self.final_url}\n\nSource: {self.final_url}\n\n{self.markdown}\n"


class WebFetcher:
    def __init__(self, *, allowlist: list[str], max_bytes: int, timeout_s: float, max_redirects: int = 5,
                 transport: httpx.BaseTransport | None = None):
        self.allow_hosts = {a.lower() for a in allowlist if "/" not in a}
        self.allow_nets = [ipaddress.ip_network(a, strict=False) for a in allowlist if "/" in a]
        self.max_bytes, self.timeout_s, self.max_redirects = max_bytes, timeout_s, max_redirects
        self._transport = transport

    def check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchDenied(f"web_fetch: only http(s) URLs with a host are allowed, not {url[:80]!r}")
        host = parts.hostname.lower()
        if host in self.allow_hosts:
            return
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
        except socket.gaierror as exc:
            raise ConnectorError(f"web_fetch: cannot resolve {host}") from exc
        for info in infos:
            address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
            if any(address in net for net in self.allow_nets):
                continue
            if (address.is_private or address.is_loopback or address.is_link_local or address.is_multicast
                    or address.is_reserved or address.is_unspecified):
                raise FetchDenied(f"web_fetch: {host} resolves to a non-public address ({address}); "
                                  "add it to KB_AGENT_WEB_ALLOWLIST to allow it")

    def fetch(self, url: str) -> WebPage:
        deadline = time.monotonic() + self.timeout_s
        current = url
        with httpx.Client(timeout=self.timeout_s, transport=self._transport, follow_redirects=False) as client:
            for _ in range(self.max_redirects + 1):
                self.check(current)
                try:
                    with client.stream("GET", current, headers={"User-Agent": "kb-agent"}) as response:
                        if response.is_redirect:
                            current = urljoin(current, response.headers.get("Location", ""))
                            continue
                        if response.status_code >= 400:
                            raise ConnectorError(f"web_fetch: HTTP {response.status_code} for {current}",
                                                 response.status_code)
                        kind = response.headers.get("Content-Type", "text/html").split(";")[0].strip().lower()
                        if kind not in ("text/html", "application/xhtml+xml", "text/plain", "text/markdown"):
                            raise ConnectorError(f"web_fetch: unsupported content type {kind!r}")
                        body = bytearray()
                        for piece in response.iter_bytes():
                            body += piece
                            if len(body) > self.max_bytes:
                                raise ConnectorError(f"web_fetch: page larger than {self.max_bytes:,} bytes")
                            if time.monotonic() > deadline:
                                raise ConnectorError(f"web_fetch: page took longer than {self.timeout_s:.0f}s")
                        text = body.decode(response.encoding or "utf-8", errors="replace")
                except httpx.TimeoutException:
                    raise ConnectorError(f"web_fetch: no answer within {self.timeout_s:.0f}s") from None
                except httpx.HTTPError as exc:
                    raise ConnectorError(f"web_fetch: cannot fetch {current} ({type(exc).__name__})") from None
                if kind in ("text/plain", "text/markdown"):
                    return WebPage(url, current, current.rsplit("/", 1)[-1], text.strip())
                title_tag = BeautifulSoup(text, "lxml").title
                title = title_tag.get_text(" ", strip=True) if title_tag else ""
                return WebPage(url, current, title, html_to_markdown(text, current))
        raise ConnectorError(f"web_fetch: more than {self.max_redirects} redirects")
