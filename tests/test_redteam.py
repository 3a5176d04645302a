"""The adversarial suite: at least 200 cases, zero leaks - and it does catch leaks when the ACL is broken."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kb_agent.evaluation.redteam import run_redteam
from kb_agent.interfaces.cli import app


@pytest.mark.slow
def test_redteam_cli_reports_no_leaks():
    result = CliRunner().invoke(app, ["redteam", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cases"] >= 350 and report["leaks"] == 0, report
    assert set(report["by_category"]) == {
        "direct_ask",
        "jailbreak",
        "indirect_injection",
        "forged_tool_call",
        "traversal",
        "acl_edge",
        "cache_reuse",
        "vault_secret",
        "ingest_acl_sources",
        "stale_file",
        "abac",
        "stream_masking",
        "planted_tool_calls",
        "secret_reflection",
        "transport",
        "ssrf_ranges",
        "audit_tamper",
    }


def test_the_suite_detects_a_broken_acl(monkeypatch):
    from kb_agent.governance.access import AccessFilter
    from kb_agent.governance.request import Request

    monkeypatch.setattr(Request, "access", property(lambda self: AccessFilter.unrestricted()))
    report = run_redteam(categories={"direct_ask", "acl_edge"})
    assert report["leaks"] > 20


# -- one control per fail-closed category: its guard switched off, the suite must see leaks ----------------
def _tolerant_front_matter(monkeypatch):
    from kb_agent.ingest.acl import AclError
    from kb_agent.ingest.loaders import text
    from kb_agent.ingest.loaders.front_matter import FrontMatter, parse_front_matter

    def tolerant(lines, where):  # the old behaviour: a block that cannot be read is simply ignored
        try:
            return parse_front_matter(lines, where)
        except AclError:
            return FrontMatter()

    monkeypatch.setattr(text, "parse_front_matter", tolerant)


def _live_reads(monkeypatch):
    from kb_agent.retrieval import searcher
    from kb_agent.tools import file_tools

    def live(record, max_bytes):  # serve whatever the path holds now
        with open(record.source, "rb") as handle:
            return handle.read()

    monkeypatch.setattr(file_tools, "read_indexed_bytes", live)
    monkeypatch.setattr(searcher, "read_indexed_bytes", live)


def _abac_ignored(monkeypatch):
    from kb_agent.governance import policy

    monkeypatch.setattr(policy, "_conditions_hold", lambda when, user: True)


def _unmasked_streams(monkeypatch):
    from kb_agent.governance.outbound import StreamMasker

    monkeypatch.setattr(StreamMasker, "feed", lambda self, piece: piece)


def _any_url(monkeypatch):
    from kb_agent.engine import Engine

    original = Engine.tool_context
    monkeypatch.setattr(
        Engine, "tool_context", lambda self, req, kbs=None, allowed_urls=None: original(self, req, kbs, None)
    )


def _no_scrub(monkeypatch):
    from kb_agent.connectors import http

    monkeypatch.setattr(http, "_scrub", lambda value, forms: value)


def _no_transport_guard(monkeypatch):
    from kb_agent.interfaces.http_guard import HttpGuard

    async def passthrough(self, scope, receive, send):
        await self.app(scope, receive, send)

    monkeypatch.setattr(HttpGuard, "__call__", passthrough)


def _every_address_public(monkeypatch):
    from kb_agent.connectors import egress

    monkeypatch.setattr(egress, "is_public", lambda address: True)


def _unkeyed_audit(monkeypatch):
    import hashlib

    from kb_agent.governance.audit import AuditLog

    monkeypatch.setattr(AuditLog, "_mac", lambda self, key, data: hashlib.sha256(data).hexdigest())


CONTROLS = {
    "ingest_acl_sources": _tolerant_front_matter,
    "stale_file": _live_reads,
    "abac": _abac_ignored,
    "stream_masking": _unmasked_streams,
    "planted_tool_calls": _any_url,
    "secret_reflection": _no_scrub,
    "transport": _no_transport_guard,
    "ssrf_ranges": _every_address_public,
    "audit_tamper": _unkeyed_audit,
}


@pytest.mark.slow
@pytest.mark.parametrize("category", sorted(CONTROLS))
def test_each_category_catches_the_leak_when_its_guard_is_off(monkeypatch, category):
    CONTROLS[category](monkeypatch)
    report = run_redteam(categories={category})
    assert report["by_category"][category]["leaks"] > 0, report["by_category"]
