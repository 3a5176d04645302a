"""The connectors one engine offers its tools, built from settings and the credential vault."""

from __future__ import annotations

from functools import cached_property

from kb_agent.config import Settings
from kb_agent.connectors.confluence import ConfluenceClient
from kb_agent.connectors.http import ConnectorError, RestClient, TTLCache
from kb_agent.connectors.jira import JiraClient
from kb_agent.connectors.web import WebFetcher
from kb_agent.governance.vault import Vault, VaultError


class Connectors:
    def __init__(self, settings: Settings, vault: Vault, transport=None, resolver=None):
        """`transport` (an httpx transport) and `resolver` (a getaddrinfo) are for tests and the red team."""
        self.settings, self.vault, self._transport, self._resolver = settings, vault, transport, resolver

    @cached_property
    def cache(self) -> TTLCache:
        return TTLCache(self.settings.data_folder / "cache" / "connectors.sqlite", self.settings.connector_cache_ttl_s)

    def _secret(self, name: str):
        def load():
            if name not in self.vault.names():
                return None  # anonymous access (public instances)
            try:
                return self.vault.get(name)
            except VaultError as exc:
                raise ConnectorError(str(exc)) from None

        return load

    def _rest(self, url: str, name: str, credential: str) -> RestClient:
        return RestClient(
            url,
            name=name,
            credential=credential,
            secret=self._secret(credential),
            cache=self.cache,
            timeout_s=self.settings.tool_timeout_s,
            transport=self._transport,
        )

    def jira(self) -> JiraClient:
        url = self.settings.jira_url
        if not url:
            raise ConnectorError("Jira is not configured: set KB_AGENT_JIRA_URL")
        deployment = self.settings.jira_deployment
        if deployment == "auto":
            deployment = "cloud" if ".atlassian.net" in url else "server"
        return JiraClient(self._rest(url, "jira", self.settings.jira_credential), deployment)

    def confluence(self) -> ConfluenceClient:
        url = self.settings.confluence_url
        if not url:
            raise ConnectorError("Confluence is not configured: set KB_AGENT_CONFLUENCE_URL")
        return ConfluenceClient(self._rest(url, "confluence", self.settings.confluence_credential))

    def web(self) -> WebFetcher:
        s = self.settings
        return WebFetcher(
            allowlist=s.web_allowlist,
            max_bytes=s.web_max_bytes,
            timeout_s=s.web_timeout_s,
            transport=self._transport,
            resolver=self._resolver,
        )

    def configured(self) -> set[str]:
        return {
            name
            for name, url in (("jira", self.settings.jira_url), ("confluence", self.settings.confluence_url))
            if url
        }
