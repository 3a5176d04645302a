"""`kb-agent policy check`, `acl explain`, `audit verify`, `audit show`: governance from the command line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from kb_agent.interfaces.cli.app import AsOpt, GovernedTyper, GroupOpt, JsonOpt, app, caller, fail, open_engine, out

policy_app = GovernedTyper(no_args_is_help=True, help="The access policy (KB_AGENT_POLICY_FILE).")
acl_app = GovernedTyper(no_args_is_help=True, help="Who may see what, and why.")
audit_app = GovernedTyper(no_args_is_help=True, help="The signed, hash-chained audit trail.")
app.add_typer(policy_app, name="policy")
app.add_typer(acl_app, name="acl")
app.add_typer(audit_app, name="audit")


@policy_app.command("check")
def policy_check(
    file: Annotated[Path | None, typer.Argument(help="Policy file (default: KB_AGENT_POLICY_FILE).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Validate a policy file; problems are reported with their line numbers (exit code 2)."""
    from kb_agent.config import get_settings
    from kb_agent.governance.policy import PolicyError, parse_policy

    path = file or get_settings().policy_file
    if path is None:
        fail("no policy file given and KB_AGENT_POLICY_FILE is not set (single-user mode)", 2)
    try:
        policy = parse_policy(Path(path).read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}", 2)
    except PolicyError as exc:
        if as_json:
            print(json.dumps({"ok": False, "problems": exc.problems}))
        else:
            print("\n".join(exc.problems))  # plain lines: editors and CI parse file:line
        raise typer.Exit(2) from exc
    summary = {"ok": True, "users": len(policy.users), "groups": len(policy.groups)}
    print(json.dumps(summary)) if as_json else out.print(
        f"{path}: ok ({summary['users']} users, {summary['groups']} groups)", highlight=False
    )


@acl_app.command("explain")
def acl_explain(
    path: Annotated[str, typer.Argument(help="Indexed path as shown in citations.")],
    kb: Annotated[str | None, typer.Option("--kb")] = None,
    as_user: AsOpt = None,
    as_group: GroupOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Who may see a document (its ACL and where it comes from) and whether this user may, and why."""
    engine = open_engine()
    report = engine.explain_acl(path, kb=kb, user=caller(engine, as_group, as_user))
    if as_json:
        print(json.dumps(report))
        return
    groups = report["groups"] if report["groups"] is not None else "all"
    out.print(
        f"{report['path']} (kb {report['kb']})\n  readable by: {report['acl'] or 'everyone'} — {report['derivation']}",
        highlight=False,
        markup=False,
    )
    for source in report["acl_sources"]:
        out.print(
            f"    {source['kind']:<13} {source['where']}: {source['groups'] or 'no group'}",
            highlight=False,
            markup=False,
        )
    out.print(
        f"  {report['user']}: groups {groups} (policy rules: {', '.join(report['rules'])})\n"
        f"  → {report['decision'].upper()}: {report['reason']}",
        highlight=False,
        markup=False,
    )


@audit_app.command("verify")
def audit_verify(as_json: JsonOpt = False) -> None:
    """Check the signed chain: an edited, deleted, inserted or reordered record, a truncated tail, a re-signed or
    deleted log are reported (exit code 1)."""
    report = open_engine().verify_audit()
    if as_json:
        print(
            json.dumps({"records": report.records, "ok": report.ok, "problems": report.problems, "notes": report.notes})
        )
    else:
        out.print(f"{report.records} records: " + ("chain intact" if report.ok else "CHAIN BROKEN"), highlight=False)
        for problem in report.problems:
            out.print(f"  {problem}", highlight=False, markup=False)
        for note in report.notes:
            out.print(f"  note: {note}", highlight=False, markup=False)
    if not report.ok:
        raise typer.Exit(1)


@audit_app.command("show")
def audit_show(
    trace_id: Annotated[str, typer.Argument(help="The trace id of one question or tool call.")],
    as_json: JsonOpt = False,
) -> None:
    """One request's story: policy decisions, nodes, tool calls, LLM calls, fast paths, the answer."""
    records = open_engine().audit_records(trace_id)
    if not records:
        fail(f"no audit records for trace {trace_id!r}")
    if as_json:
        print(json.dumps(records, ensure_ascii=False))
        return
    skip = {"ts", "event", "trace_id", "prev", "hash"}
    for r in records:
        when = datetime.fromtimestamp(r["ts"], UTC).strftime("%H:%M:%S.%f")[:-3]
        detail = ", ".join(f"{k}={v}" for k, v in r.items() if k not in skip and v not in (None, [], {}))
        out.print(f"{when} {r['event']:<16} {detail}", highlight=False, markup=False)
