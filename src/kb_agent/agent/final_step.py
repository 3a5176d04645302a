"""The last step of a multi-step question as the answer step reads it: its query with the bridge put in, whether
a rule read the steps, and the bridges searched - what the answer's lines must be about."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from kb_agent.agent.answer_types import asked_types, states_each
from kb_agent.agent.evidence_units import Unit, units_of
from kb_agent.agent.extractive import Embed
from kb_agent.agent.question_terms import key_terms, term_credits
from kb_agent.agent.quote_selection import choose
from kb_agent.agent.sentences import Sentence
from kb_agent.agent.state import AgentState
from kb_agent.agent.step_rules import GUESSED_BRIDGE
from kb_agent.text.tokenize import has_cjk, tokenize
from kb_agent.tools.base import Evidence


@dataclass
class FinalStep:
    query: str  # the last step with the earlier answers put in: "Who directed Blue Velvet?"
    ruled: bool  # a decomposition rule read the question (not a guessed bridge in front of the question)
    bridges: list[str]  # the earlier step's answers searched (best, second): evidence naming none cannot answer

    def names_bridge(self, text: str) -> bool:
        return any(bridge.lower() in text.lower() for bridge in self.bridges) or self.opens(text)

    def opens(self, text: str) -> bool:
        """The passage is the bridge's own: it opens with its name ("A Very Brady Sequel is a 1996 …"), a
        person's maybe with a middle name ("Richard Nathaniel Wright (September 4, 1908 – …" of Richard Wright)."""
        head = _unthe(text.lstrip(" \"'*#_"))  # "The Chesapeake Bay Retriever is …"
        return any(head.startswith(_unthe(bridge)) or _full_name_opens(head, _unthe(bridge)) for bridge in self.bridges)

    def relation(self) -> str:
        """What the last step asks of its bridge, the bridge left out: "Carl Philipp Emanuel Bach godfather is
        whom" -> "godfather is whom". The bridge's own page says it as "his" ("… his godfather Telemann")."""
        for bridge in self.bridges:
            if bridge.lower() in self.query.lower():
                return " ".join(re.sub(re.escape(bridge), " ", self.query, flags=re.I).split())
        return ""

    def only_names_bridge(self, text: str, asked: set[str]) -> bool:
        """The line shares with the relation only words of the bridge's name ("Jung" of "Jung Eun-ji")."""
        named = {t for bridge in self.bridges for t in tokenize(bridge)}
        return not (asked & set(tokenize(text))) - named


def _unthe(name: str) -> str:
    """Lower-cased, without a leading "the"."""
    return re.sub(r"^the\s+", "", name.lower())


_MIDDLE_NAMES = 2  # "Richard Nathaniel Wright": names between the first and the last


def _full_name_opens(head: str, bridge: str) -> bool:
    """`head` opens with the bridge's first name and says its last one within the next few words."""
    words, opening = bridge.split(), head.split()[: _MIDDLE_NAMES + 2]
    return len(words) >= 2 and opening[:1] == words[:1] and words[-1] in opening[1:]


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


# a life's span in parentheses after a name: two years, a dash between ("(1026 – 25 September 1066)")
_LIFE_SPAN = re.compile(r"\([^()]*?\b\d{3,4}\b[^()]*?[–—-][^()]*?\b\d{3,4}\b[^()]*\)")
_LIFE_WORDS = frozenset(tokenize("born birth die died death"))


def relation_line(final: FinalStep, passages: list[Evidence], embed: Embed | None) -> list[Sentence]:
    """The bridge's own line that answers the last step when its words are not the question's: asked "Which
    girl group counts among its singers Jung Eun-ji?", her page says "the main vocalist of the South Korean girl
    group Apink" - too few of the step's words for the lexical ranker, which then answers nothing (a refusal
    with the answer's page in hand). Of the lines of `passages` (the bridge's own) that state what the step
    asks for (a number, a date) and share a word with its relation, the one the embedder finds closest to
    it; without the embedder, the one sharing most. [] when none qualifies."""
    relation = final.relation() or final.query
    asked = key_terms(relation)
    types = asked_types(final.query)
    shared: list[tuple[float, Unit]] = []
    for index, passage in enumerate(passages):
        for unit in units_of(index, passage):
            if unit.zh != has_cjk(relation) or not states_each(types, unit.text, final.query):
                continue
            held = sum(term_credits(unit.terms, unit.text, asked).values())
            # "(September 4, 1908 – November 28, 1960)" says when he was born and when he died
            life = bool(asked & _LIFE_WORDS and _LIFE_SPAN.search(unit.text))
            held += life
            # (a line sharing no word is no answer, however close: "http://localhost:8000/items/?q=foo" was
            # quoted for the maximum length of a pattern the pages never give)
            if life or (held > 0 and not final.only_names_bridge(unit.text, asked)):
                shared.append((held, unit))
    if not shared:
        return []
    scores = [held / (len(asked) or 1) for held, _ in shared]
    if embed is not None:
        with contextlib.suppress(Exception):  # the embedder is a second opinion; without it the words decide
            similarities = embed(final.query, [unit.text for _, unit in shared])
            scores = [s + float(similarity) for s, similarity in zip(scores, similarities, strict=True)]
    best = max(range(len(shared)), key=lambda i: scores[i])
    unit = shared[best][1]
    unit.score = unit.own = unit.coverage = scores[best]
    return choose(final.query, [unit], passages, 1)
