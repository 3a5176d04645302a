"""web_fetch: one page as Markdown (main content only), with size and time limits and an SSRF guard.

Only globally routable addresses are reached unless the host (or its network) is on the allow-list
(connectors/egress.py); the request goes to exactly the address that was checked, and every redirect
hop is resolved and checked again."""

from __future__ import annotations

import contextlib
import ipaddress
import re
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx
from bs4 import BeautifulSoup
from markdownify import markdownify

from kb_agent.connectors.egress import FetchDenied, public_address
from kb_agent.connectors.http import ConnectorError

_NOISE = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "svg", "button")
_BLANKS = re.compile(r"\n{3,}")


__all__ = ["FetchDenied", "WebFetcher", "WebPage", "html_to_markdown"]


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    soup = BeautifulSoup(html or "", "lxml")
    for tag in soup(list(_NOISE)):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.select_one('[role="main"]') or soup.body or soup
    if base_url:
        for link in main.find_all("a", href=True):
            link["href"] = urljoin(base_url, str(link["href"]))
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
    def __init__(
        self,
        *,
        allowlist: list[str],
        max_bytes: int,
        timeout_s: float,
        max_redirects: int = 5,
        transport: httpx.BaseTransport | None = None,
        resolver=None,
    ):
        self.allow_hosts = {a.lower() for a in allowlist if "/" not in a}
        self.allow_nets = [ipaddress.ip_network(a, strict=False) for a in allowlist if "/" in a]
        self.max_bytes, self.timeout_s, self.max_redirects = max_bytes, timeout_s, max_redirects
        self._transport, self._resolver = transport, resolver

    def check(self, url: str) -> httpx.URL:
        """The URL to request: `url` with its host replaced by the one address that was checked."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchDenied(f"web_fetch: only http(s) URLs with a host are allowed, not {url[:80]!r}")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise FetchDenied(f"web_fetch: invalid port in {url[:80]!r}") from None
        address = public_address(
            parts.hostname, port, allow_hosts=self.allow_hosts, allow_nets=self.allow_nets, resolver=self._resolver
        )
        return httpx.URL(url).copy_with(host=address)

    def fetch(self, url: str) -> WebPage:
        deadline = time.monotonic() + self.timeout_s
        current = url
        with httpx.Client(timeout=self.timeout_s, transport=self._transport, follow_redirects=False) as client:
            for _ in range(self.max_redirects + 1):
                pinned = self.check(current)
                host = httpx.URL(current)
                request = client.build_request(
                    "GET",
                    pinned,
                    headers={"User-Agent": "kb-agent", "Host": host.netloc.decode("ascii")},
                    extensions={"sni_hostname": host.host},
                )  # TLS is verified against the name, not the address
                try:
                    with contextlib.closing(client.send(request, stream=True)) as response:
                        if response.is_redirect:
                            current = urljoin(current, response.headers.get("Location", ""))
                            continue
                        if response.status_code >= 400:
                            raise ConnectorError(
                                f"web_fetch: HTTP {response.status_code} for {current}", response.status_code
                            )
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
