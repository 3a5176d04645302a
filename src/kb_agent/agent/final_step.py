"""The last step of a multi-step question as the answer step reads it: its query with the bridge put in, whether
a rule read the steps, and the bridges searched - what the answer's lines must be about."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb_agent.agent.state import AgentState
from kb_agent.agent.step_rules import GUESSED_BRIDGE


@dataclass
class FinalStep:
    query: str  # the last step with the earlier answers put in: "Who directed Blue Velvet?"
    ruled: bool  # a decomposition rule read the question (not a guessed bridge in front of the question)
    bridges: list[str]  # the earlier step's answers searched (best, second): evidence naming none cannot answer

    def names_bridge(self, text: str) -> bool:
        return any(bridge.lower() in text.lower() for bridge in self.bridges)

    def opens(self, text: str) -> bool:
        """The passage is the bridge's own: it opens with its name ("A Very Brady Sequel is a 1996 …")."""
        head = text.lstrip(" \"'*#_").lower()
        return any(head.startswith(bridge.lower()) for bridge in self.bridges)

    def relation(self) -> str:
        """What the last step asks of its bridge, the bridge left out: "Carl Philipp Emanuel Bach godfather is
        whom" -> "godfather is whom". The bridge's own page says it as "his" ("… his godfather Telemann")."""
        for bridge in self.bridges:
            if bridge.lower() in self.query.lower():
                return " ".join(re.sub(re.escape(bridge), " ", self.query, flags=re.I).split())
        return ""


def final_step(state: AgentState) -> FinalStep | None:
    """The last step of a multi-step question, its bridge put in: the question's own words describe the
    bridge, which the answering passage may never say."""
    trace = state.get("steps") or []
    if len(trace) < 2 or trace[-1].get("skipped") or not trace[-1].get("query"):
        return None
    bridges = [b for b in (trace[-2].get("answer"), trace[-2].get("alternate")) if b]
    if not bridges:
        return None
    return FinalStep(trace[-1]["query"], (state.get("step_plan") or {}).get("rule") != GUESSED_BRIDGE, bridges)
