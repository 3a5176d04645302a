"""Policy (PDP) with line-numbered validation, the gate (PEP) on every entry point, budgets, rate limits,
the hash-chained audit trail, masking kinds and exemptions, and the circuit breaker."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import HashEmbedder, write
from kb_agent.config import get_settings
from kb_agent.engine import Engine
from kb_agent.governance.budget import LimitExceeded
from kb_agent.governance.gate import AccessDenied
from kb_agent.governance.masking import cn_id_ok, iban_ok, mask_text
from kb_agent.governance.policy import PolicyError, parse_policy
from kb_agent.interfaces.cli import app
from kb_agent.llm.scripted import ScriptedLLM
from test_agent_graph import ByRole, fit_grades, route

POLICY = """\
users:
  alice: {groups: [hr], tenant: acme}
  bob: {groups: [eng], tenant: acme}
  mallory: {groups: [eng], tenant: other}
  carol: {groups: [reader]}
groups:
  hr:
    tools: ["*"]
    knowledge_bases: ["*"]
    acl_tags: [payroll]
    mask_exempt: [email]
  eng:
    tools: [hybrid_search, read_file]
    knowledge_bases: [default]
    when: {tenant: acme}
  reader:
    tools: [hybrid_search]
    knowledge_bases: [default]
    token_budget_per_day: 50
    rate_limit_per_min: 3
default_groups: [reader]
"""


@pytest.fixture
def corp(tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe office opens at nine. Questions to help@corp.example.\n")
    write(root / "payroll" / ".kbacl", "payroll\n")
    write(root / "payroll" / "salaries.md", "# Salaries\nThe salary review happens in March.\n")
    return root


@pytest.fixture
def governed(settings, corp, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    engine = Engine(settings.model_copy(update={"policy_file": policy}), embedder=HashEmbedder())
    engine.index([corp])
    yield engine
    engine.close()


def test_policy_errors_name_their_lines():
    bad = POLICY.replace("    token_budget_per_day: 50", "    token_budget_per_day: lots").replace(
        "    acl_tags: [payroll]", "    acl_tag: [payroll]"
    )
    with pytest.raises(PolicyError) as info:
        parse_policy(bad, "p.yaml")
    problems = "\n".join(info.value.problems)
    assert "p.yaml:10: groups.hr.acl_tag: Extra inputs are not permitted" in problems
    assert "p.yaml:19: groups.reader.token_budget_per_day" in problems
    with pytest.raises(PolicyError, match=r"p.yaml:2: users.alice: group 'ops'"):
        parse_policy(POLICY.replace("groups: [hr]", "groups: [ops]"), "p.yaml")
    with pytest.raises(PolicyError, match=r"p.yaml:3: invalid YAML"):
        parse_policy("users:\n  a: [\n  b", "p.yaml")


def test_tools_are_gated_per_group(governed):
    bob, carol = governed.identify("bob"), governed.identify("carol")
    assert set(governed.tools_for(bob)) == {"hybrid_search", "read_file"}
    assert set(governed.tools_for(carol)) == {"hybrid_search"}
    assert governed.run_tool("read_file", {"path": "corp/handbook.md"}, user=carol).status == "denied"
    denied = [r for r in governed.audit.records("tool_call") if r["status"] == "denied"]
    assert denied and denied[-1]["tool"] == "read_file"


def test_abac_conditions_and_default_groups(governed):
    assert governed.tools_for(governed.identify("mallory")) == {}  # eng rule needs tenant acme
    stranger = governed.identify("zed")
    assert stranger.groups == ["reader"] and set(governed.tools_for(stranger)) == {"hybrid_search"}


def test_knowledge_bases_are_gated(governed):
    with pytest.raises(AccessDenied, match="may not use knowledge base"):
        governed.search("office", user=governed.identify("bob"), kbs=["hr-secret"])
    assert any(r["decision"] == "deny" for r in governed.audit.records("policy_decision"))


def test_acl_tags_from_the_policy_extend_access(governed):
    alice, bob = governed.identify("alice"), governed.identify("bob")
    assert governed.search("salary review", user=alice, mode="bm25").hits[0].path == "corp/payroll/salaries.md"
    assert all("payroll" not in h.path for h in governed.search("salary review", user=bob, mode="bm25").hits)


def test_a_forged_tool_call_from_the_model_is_refused_and_audited(governed, settings):
    script = ByRole(
        route=route(complexity="complex"),
        plan=json.dumps(
            {
                "queries": ["salary"],
                "calls": [
                    {"name": "read_file", "args": {"path": "corp/payroll/salaries.md"}},
                    {"name": "shell_exec", "args": {"cmd": "cat /etc/shadow"}},
                ],
            }
        ),
        grade=fit_grades(0.9),
        synth="Nothing [1].",
    )
    engine = Engine(governed.settings, embedder=HashEmbedder(), llm=ScriptedLLM(script))
    try:
        answer = engine.answer_query("When is the salary review?", user=engine.identify("carol"))
        assert all("payroll" not in c.path for c in answer.citations)
        assert not any(call["name"] in ("read_file", "shell_exec") for call in answer.tool_calls)
    finally:
        engine.close()


def test_token_budget_warns_then_stops(governed):
    carol = governed.identify("carol")
    governed.gate.budgets.add("carol", 41)
    answer = governed.answer_query("When does the office open?", user=carol)
    assert any("budget" in n for n in answer.notices)
    governed.gate.budgets.add("carol", 20)
    with pytest.raises(LimitExceeded, match="daily token budget reached"):
        governed.answer_query("When does the office open?", user=carol)


def test_rate_limit_per_group(governed):
    carol = governed.identify("carol")
    for _ in range(3):
        governed.search("office", user=carol)
    with pytest.raises(LimitExceeded, match="rate limit reached: 3 requests per minute"):
        governed.search("office", user=carol)


def test_masking_exemption_per_group(governed):
    alice, bob = governed.identify("alice"), governed.identify("bob")
    assert "help@corp.example" in governed.answer_query("Where do questions go?", user=alice).answer
    assert "[EMAIL]" in governed.answer_query("Where do questions go?", user=bob).answer


def test_audit_chain_detects_edits_and_deletions(governed):
    governed.answer_query("When does the office open?", user=governed.identify("bob"))
    audit = governed.audit
    assert audit.verify().ok
    lines = audit.path.read_text().splitlines()
    edited = json.loads(lines[2])
    edited["decision"] = "allow-everything"
    audit.path.write_text("\n".join([*lines[:2], json.dumps(edited), *lines[3:]]) + "\n")
    report = audit.verify()
    assert not report.ok and "line 3: content does not match its hash" in report.problems[0]
    audit.path.write_text("\n".join([*lines[:2], *lines[3:]]) + "\n")
    assert "line 3: does not follow line 2" in audit.verify().problems[0]


def test_audit_records_tell_one_questions_story(governed):
    answer = governed.answer_query("When does the office open?", user=governed.identify("bob"))
    events = [r["event"] for r in governed.audit.records(trace_id=answer.trace_id)]
    assert events[0] == "policy_decision" and "tool_call" in events and "node" in events
    assert events[-1] == "answer"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("call 13812345678 now", "phone"),
        ("id 11010519491231002X here", "cn_id"),
        ("pay GB82 WEST 1234 5698 7654 32 today", "iban"),
        ("card 4111 1111 1111 1111", "card"),
        ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abcdefghijk", "jwt"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private_key"),
        ("api_key=abcd1234efgh5678", "secret"),
        ("mail a.b@corp.com", "email"),
    ],
)
def test_masking_kinds(text, kind):
    masked, counts = mask_text(text)
    assert counts.get(kind) == 1, (masked, counts)
    assert mask_text(text, exempt=[kind])[0] == text or kind == "secret"
    # what eval answers takes for a masked value (not the file's text) is what masking writes
    from kb_agent.governance.masking import MASK_KINDS, PLACEHOLDER

    assert kind in MASK_KINDS and PLACEHOLDER.search(masked)


def test_masking_checks_checksums():
    assert cn_id_ok("11010519491231002X") and not cn_id_ok("110105194912310021")
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and not iban_ok("GB82 WEST 1234 5698 7654 33")
    assert mask_text("id 110105194912310021")[1] == {} and mask_text("card 4111 1111 1111 1112")[1] == {}


def test_circuit_breaker_answers_with_what_was_found(settings, corp):
    script = ByRole(
        route=route(complexity="complex"),
        plan=json.dumps({"queries": ["office"]}),
        grade=fit_grades(0.5),
        synth="The office opens at nine [1].",
    )
    engine = Engine(
        settings.model_copy(
            update={
                "max_answer_seconds": 0.001,
                "auto_approve_max_items": 0,
                "route_by_shape": False,
                "step_call_budget": False,  # the time breaker, not the call budget, stops the rounds
            }
        ),
        embedder=HashEmbedder(),
        llm=ScriptedLLM(script),
    )
    try:
        engine.index([corp])
        answer = engine.answer_query("When does the office open and close?")
        assert script.roles == ["route", "plan", "grade", "synth"]
        assert any("KB_AGENT_MAX_ANSWER_SECONDS" in n for n in answer.notices)
    finally:
        engine.close()


runner = CliRunner()


def test_cli_policy_check_and_acl_explain(governed, tmp_path, monkeypatch):
    monkeypatch.setenv("KB_AGENT_DATA_FOLDER", str(governed.settings.data_folder))
    monkeypatch.setenv("KB_AGENT_POLICY_FILE", str(tmp_path / "policy.yaml"))
    get_settings.cache_clear()
    try:
        ok = runner.invoke(app, ["policy", "check", "--json"])
        assert ok.exit_code == 0 and json.loads(ok.stdout) == {"ok": True, "users": 4, "groups": 3}
        (tmp_path / "bad.yaml").write_text("groups:\n  x:\n    tools: 5\n")
        bad = runner.invoke(app, ["policy", "check", str(tmp_path / "bad.yaml")])
        assert bad.exit_code == 2 and "bad.yaml:3: groups.x.tools" in bad.stdout
        explain = json.loads(
            runner.invoke(app, ["acl", "explain", "corp/payroll/salaries.md", "--as", "bob", "--json"]).stdout
        )
        assert explain["decision"] == "deny" and explain["acl"] == ["payroll"]
        assert explain["acl_source"] == ".kbacl file in its folder or a parent"
        allowed = json.loads(
            runner.invoke(app, ["acl", "explain", "corp/payroll/salaries.md", "--as", "alice", "--json"]).stdout
        )
        assert allowed["decision"] == "allow" and "payroll" in allowed["reason"]
        verify = runner.invoke(app, ["audit", "verify", "--json"])
        assert verify.exit_code == 0 and json.loads(verify.stdout)["ok"]
    finally:
        get_settings.cache_clear()


def test_logs_are_masked(governed, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="kb_agent.agent"):
        logging.getLogger("kb_agent.agent").info("plan: dropped call for %s", "ops@corp.example")
    assert "ops@corp.example" not in caplog.text and "[EMAIL]" in caplog.text


def test_tool_call_audit_records_masked_args(governed):
    governed.run_tool("hybrid_search", {"query": "mail boss@corp.example"}, user=governed.identify("alice"))
    record = governed.audit.records("tool_call")[-1]
    assert record["args"]["query"] == "mail [EMAIL]"
