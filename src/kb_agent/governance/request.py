"""One governed request. The gate opens it for every entry point (CLI, HTTP, OpenAI-compatible, MCP, TUI)
and it owns what governance means for that request:

- the policy decision (tools, knowledge bases, ACL groups, masking exemptions) and the trace id;
- the audit writer: every record of the request carries its trace id;
- the metered models: their calls are audited and their tokens charged to the user's budget at close;
- the outbound filter: every text that leaves - answers, streamed tokens, snippets, previews, errors.

Entry points never call audit, masking or budget code themselves."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from kb_agent.governance.access import AccessFilter
from kb_agent.governance.audit import AuditLog
from kb_agent.governance.budget import Budgets
from kb_agent.governance.errors import classify
from kb_agent.governance.identity import UserContext
from kb_agent.governance.outbound import Outbound
from kb_agent.governance.policy import Decision


class Metered(Protocol):
    """What the request needs of a model it meters (kb_agent.llm.base.MeteredLLM)."""

    calls: list[Any]

    def usage(self) -> dict: ...


class Request:
    def __init__(
        self,
        *,
        user: UserContext,
        decision: Decision,
        action: str,
        kbs: list[str],
        trace_id: str,
        audit: AuditLog,
        budgets: Budgets,
        warning: str | None = None,
    ):
        self.user, self.decision, self.action, self.kbs = user, decision, action, kbs
        self.trace_id, self.warning = trace_id, warning
        self.outbound = Outbound(decision.mask_exempt)
        self._audit, self._budgets = audit, budgets
        self._meters: list[Metered] = []
        self._outcome: tuple[str, dict] | None = None
        self._closed = False
        self.started = time.perf_counter()

    @property
    def access(self) -> AccessFilter:
        groups = self.decision.acl_groups
        return AccessFilter.unrestricted() if groups is None else AccessFilter.for_groups(groups)

    def audit(
        self, event: str, payload: dict, *, task_id: str | None = None, parent_task_id: str | None = None
    ) -> None:
        self._audit.write(event, payload, trace_id=self.trace_id, task_id=task_id, parent_task_id=parent_task_id)

    def meter(self, llm):
        """Register a per-request model view; its calls and tokens are accounted at close."""
        if llm is not None and all(llm is not m for m in self._meters):
            self._meters.append(llm)
        return llm

    def finish(self, event: str, payload: dict) -> None:
        """The request's outcome record, written last when it closes (after its model calls and masking)."""
        self._outcome = (event, payload)

    def tokens(self) -> int:
        return sum(m.usage()["prompt_tokens"] + m.usage()["completion_tokens"] for m in self._meters)

    def stream_in_thread(self, work: Callable[[Callable[[dict], None]], dict]) -> Iterator[dict]:
        """Run `work(emit)` in a thread and yield what it emits, then its final event - or an error event with
        the mapped, masked message (no traceback). The request is closed either way."""
        events: queue.Queue = queue.Queue()
        done = object()

        def run() -> None:
            try:
                final = work(events.put)
                self.close()
                events.put(final)
            except Exception as exc:
                self.close(exc)
                failure = classify(exc)
                events.put(
                    {
                        "type": "error",
                        "error": failure.message,
                        "status": failure.status,
                        "kind": failure.kind,
                        "exit_code": failure.exit_code,
                    }
                )
            finally:
                events.put(done)

        threading.Thread(target=run, daemon=True).start()

        def drain() -> Iterator[dict]:
            while (event := events.get()) is not done:
                yield event

        return drain()

    def close(self, error: BaseException | None = None) -> None:
        """Audit the model calls, the masking and the outcome; charge the tokens. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for llm in self._meters:
            for call in list(llm.calls):
                self.audit(
                    "llm_call",
                    {
                        "model": call.model,
                        "purpose": call.purpose,
                        "ok": call.ok,
                        "prompt_tokens": call.prompt_tokens,
                        "completion_tokens": call.completion_tokens,
                        "latency_ms": round(call.latency_ms, 1),
                    },
                )
        self._budgets.add(self.user.user_id, self.tokens())
        if self.outbound.counts:
            self.audit("masked", {"counts": dict(self.outbound.counts)})
        if self._outcome is not None and error is None:
            self.audit(*self._outcome)
        if error is not None:
            failure = classify(error)
            self.audit(
                "request_failed",
                {
                    "action": self.action,
                    "user": self.user.user_id,
                    "kind": failure.kind,
                    "status": failure.status,
                    "message": failure.message,
                },
            )
