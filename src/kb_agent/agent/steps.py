"""Sequential multi-step retrieval: a question that hides its second entity ("who directed the film that was
shot in Leland in 1986?") is answered in ordered steps. Step 1 finds the hidden entity ("the film that was
shot in Leland in 1986"), a bounded extraction names it ("Blue Velvet"), and the next step searches with the
name in place of `#1` ("Who directed Blue Velvet?").

Decomposition is by rule, so the path works with no model at all; extraction copies a span out of the step's
own evidence (the local model may pick it, never invent it). The original question keeps its own search in
every round, and the rounds' lists are interleaved, so a step that goes astray costs little."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from kb_agent.agent.context import AgentContext
from kb_agent.agent.extractive import key_terms, terms
from kb_agent.agent.shape import question_shape
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence
from kb_agent.tools.tasks import TaskRequest

MAX_STEPS = 3
BRIDGES_PER_STEP = 2  # a step's two best candidates are both searched: a wrong first pick costs one search

_RELATIVE = re.compile(
    r"\b(?P<np>(?:the|a|an)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?P<rel>that|which|who|whom|whose|where|when)\s+"
    r"(?P<clause>[^?]+?)\s*(?=\?|$)",
    re.I,
)
# lower-case particles inside a name: "Cynfyn ap Gwersytan", "Ludwig van Beethoven", "Osama bin Laden"
_PARTICLES = "of|the|de|la|le|da|di|du|del|der|den|van|von|ap|bin|ibn|al|and|for|&"
_ENTITY = rf"(?:[A-Z][\w.&'-]*|\"[^\"]+\")(?:\s+(?:(?:{_PARTICLES})\s+)*[A-Z][\w.&'-]*)*"
# "the director of film Wild Horses", "the author of the novel Lucy Crown": the kind of work before its name
_KIND = r"(?:(?:the\s+)?(?:film|movie|song|album|single|novel|book|poem|play|opera|show|series|game|band|company)\s+)?"
_NAMED = _KIND + _ENTITY
# "the spouse of the director of Titanic": the innermost relation is asked first
_OF_CHAIN = re.compile(
    rf"\b(?P<head>the\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+of)\s+(?P<inner>the\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+of\s+{_NAMED})"
)
_POSSESSIVE = re.compile(
    rf"\b(?P<owner>{_ENTITY})'s\s+(?P<thing>(?:(?:first|second|third|last|latest|debut|eldest|youngest|only)\s+)?"
    r"[a-z][\w-]*)\b"
)
# "Where was the author of Lucy Crown born?": one relation of a named entity, and something else is asked of it
_OF_ONE = re.compile(rf"\b(?P<inner>the\s+(?:[a-z][\w-]*\s+){{0,2}}?(?P<head>[a-z][\w-]*)\s+of\s+{_NAMED})")
# "Who is the spouse of the Green performer?": a work's name, then the role of the person behind it
_ROLES = "performer|singer|director|author|writer|composer|producer|creator|founder|developer|publisher|designer"
# relations that name one entity of their own: a step of their own when something more is asked of it
_ENTITY_RELATIONS = frozenset(
    (
        _ROLES.replace("|", " ") + " father mother son daughter wife husband spouse brother sister parent child "
        "owner member leader president captain coach manager teacher successor predecessor birthplace capital "
        "headquarters"
    ).split()
)
_NAME_ROLE = re.compile(rf"\bthe\s+(?P<owner>{_ENTITY})\s+(?P<role>{_ROLES})\b")
# what an outer question says besides the bridge: "Where was #1 born?" asks something, "What is #1?" does not
_FRAME_WORDS = frozenset(
    "what which who whom whose when where why how is are was were did does do has have had the a an in on at of "
    "year".split()
)
# "When was the institute that owned The Collegian founded?": after an inverted "was", the clause's last word
# is the main clause's participle; after "did", its bare verb ("... die?", "... break up?")
_INVERTED = re.compile(
    r"^(?:when|where|why|how|(?:(?:in|at|on|from|for|to|by)\s+)?(?:what|which)\s+[a-z]+)\s+"
    r"(?P<aux>was|were|is|are|did|does|do)",
    re.I,
)
_PARTICIPLE = re.compile(
    r"(?:\w+(?:ed|en)|born|built|made|held|won|sold|shot|set|found|known|buried|written|drawn|begun|run|hit|put)",
    re.I,
)
_PLACES_AND_FRAMES = frozenset(
    "island city town village state county province district country region kingdom republic empire name title "
    "year month day number kind type sort part rest end beginning corner side edge top bottom middle centre center".split()
)
_VERB_PARTICLES = frozenset("up down out off on over away back".split())
_WH = re.compile(r"\b(what|which|who|whom|when|where|how)\b", re.I)
# a relative clause that only qualifies the answer ("which city ... that ...") is not a hidden entity
_ASKED_HEAD = re.compile(r"^(?:which|what|how many)\b", re.I)
_COMPARISON = re.compile(
    r"\b(both|neither|either|same|different|compared?|versus|vs\.?|older|younger|earlier|later|first|more|less)\b"
    r"|\bor\b[^?]*\?",
    re.I,
)
_NOT_THINGS = frozenset("best most largest biggest own built-in native official default new".split())  # adjectives


@dataclass
class StepPlan:
    """Ordered step queries; `#1` in a later step stands for the answer extracted in step 1."""

    steps: list[str]
    rule: str


def decompose(question: str) -> StepPlan | None:
    """Rule decomposition of the common bridge shapes; None when the question shows none (or is Chinese:
    its bridge shapes are not covered by rules yet, and the single search stays as it was). A relation inside
    a step ("the city where the author of Lucy Crown was born") becomes a step of its own: three at most."""
    text = " ".join(question.split())
    if has_cjk(text) or len(text.split()) < 5:
        return None
    plan = _two_steps(text)
    return _nested(plan) if plan and plan.rule != "bridge_entity" else plan


def _two_steps(text: str) -> StepPlan | None:
    chain = _OF_CHAIN.search(text)
    if chain:
        outer = text[: chain.start("inner")] + "#1" + text[chain.end("inner") :]
        return StepPlan([chain.group("inner"), outer], "of_chain")
    owner = _POSSESSIVE.search(text)
    if owner and owner.group("thing").split()[-1] not in _NOT_THINGS:  # "Titanic's director"
        inner = f"the {owner.group('thing')} of {owner.group('owner')}"
        return StepPlan([inner, text[: owner.start()] + "#1" + text[owner.end() :]], "possessive")
    role = _NAME_ROLE.search(text)
    if role:
        outer = text[: role.start()] + "#1" + text[role.end() :]
        if _asks_more(outer):  # "Who is the spouse of #1?", not "Who is #1?"
            return StepPlan([f"the {role.group('role')} of {role.group('owner')}", outer], "name_role")
    for match in _RELATIVE.finditer(text):
        before = text[: match.start()].strip()
        if _ASKED_HEAD.match(before) and len(before.split()) <= 2:
            continue  # "which city is the band that ...": the clause names the band, the band is asked
        noun_phrase, rel, clause = match.group("np"), match.group("rel"), match.group("clause").strip(" ,.")
        if len(clause.split()) < 2:
            continue
        if _WH.search(clause):  # the clause holds the question: find the noun phrase's entity first
            first = (text[: match.end("np")] + " " + text[match.end() :]).strip(" ?")
            return StepPlan([first, f"#1 {clause}"], "relative_clause_asked")
        clause, main_verb = _main_verb(before, clause)
        outer = (text[: match.start()] + "#1" + (f" {main_verb}" if main_verb else "") + text[match.end() :]).strip()
        if len(outer.split()) < 2:
            continue
        return StepPlan([f"{noun_phrase} {rel} {clause}", outer], "relative_clause")
    relation = _OF_ONE.search(text)
    if relation and _of_relation_is_a_bridge(text, relation):
        return StepPlan(
            [relation.group("inner"), text[: relation.start()] + "#1" + text[relation.end() :]], "of_relation"
        )
    if question_shape(text) != "simple" and not _COMPARISON.search(text):
        # not plainly one lookup, no shape found: the question's own passages may name its bridge
        return StepPlan([text, f"#1 {text}"], "bridge_entity")
    return None


def _of_relation_is_a_bridge(text: str, relation: re.Match) -> bool:
    """ "the author of Lucy Crown" is a hidden person; "the island of Oahu" is Oahu, "the forming of X or the
    birth of Y" a comparison, "the mother of Edward Stafford, 4th Baron Stafford" a name that goes on."""
    after = text[relation.end() :]
    if re.search(r"\bas\s*$", text[: relation.start()]):  # "resigned as the president of Israel": a role held
        return False
    if _COMPARISON.search(text) or relation.group("head") in _PLACES_AND_FRAMES or re.match(r",\s*(?:\d|[A-Z])", after):
        return False
    return _asks_more(text[: relation.start()] + "#1" + after)


def _asks_more(outer: str) -> bool:
    """ "Where was #1 born?" asks something of the bridge; "What is #1?" does not."""
    return bool(set(re.findall(r"[a-z]+", outer.lower())) - _FRAME_WORDS)


_OF_BRIDGE = re.compile(r"\bthe\s+(?:[a-z][\w-]*\s+)?(?P<head>[a-z][\w-]*)\s+of\s+#1\b")


def _nested(plan: StepPlan) -> StepPlan:
    """A two-step plan whose first step hides a relation of its own ("the city where the author of Lucy Crown
    was born") or whose second asks a relation of the bridge and then something more ("Where was the father of
    #1 born?") gets that relation as a step of its own."""
    first, outer = plan.steps
    relation = _OF_ONE.search(first)
    # a relation inside the clause, not the phrase the clause qualifies ("the president of Israel whose ...")
    # only in a noun phrase's clause ("the city where …"): a statement's object ("provided the voice of Rosie on
    # the sitcom", a relative_clause_asked step) is no hidden entity
    nested_in_clause = plan.rule == "relative_clause" and relation is not None and relation.start() > 0
    if relation and nested_in_clause and _of_relation_is_a_bridge(first, relation):
        middle = first[: relation.start()] + "#1" + first[relation.end() :]
        return StepPlan([relation.group("inner"), middle, outer.replace("#1", "#2")], plan.rule + "+nested")
    of_bridge = _OF_BRIDGE.search(outer)
    if of_bridge and of_bridge.group("head") in _ENTITY_RELATIONS:  # "the father of #1", not "the offices of #1"
        last = outer[: of_bridge.start()] + "#2" + outer[of_bridge.end() :]
        if _asks_more(last):
            return StepPlan([first, of_bridge.group(0), last], plan.rule + "+nested")
    return plan


def _main_verb(before: str, clause: str) -> tuple[str, str]:
    """Split the main clause's verb off the end of a relative clause that sits inside an inverted question's
    subject: ("owned The Collegian founded") -> ("owned The Collegian", "founded")."""
    inverted = _INVERTED.fullmatch(before)  # the clause's noun phrase is the inverted subject itself
    words = clause.split()
    if not inverted or len(words) < 3:
        return clause, ""
    take = 2 if words[-1].lower() in _VERB_PARTICLES and len(words) >= 4 else 1
    verb = words[-take:]
    if not verb[0].islower():
        return clause, ""
    if inverted.group("aux").lower() in {"was", "were", "is", "are"} and not _PARTICIPLE.fullmatch(verb[0]):
        return clause, ""
    return " ".join(words[:-take]), " ".join(verb)


def substitute(step: str, answers: list[str]) -> str:
    for number, answer in enumerate(answers, start=1):
        step = step.replace(f"#{number}", answer)
    return step


# a candidate answer: a run of capitalised words (inner "of", "the", "de", "and" allowed), a year, or a number
_NAME_WORD = r"(?:[A-Z]\.(?:\s?[A-Z]\.)*\s?[A-Z][\w&'-]*|[A-Z][\w.&'-]*)"
_CANDIDATE = re.compile(
    rf"\b{_NAME_WORD}(?:\s+(?:{_PARTICLES})\s+{_NAME_WORD}|\s+{_NAME_WORD})*"
    r"|\b(?:1[0-9]{3}|20[0-9]{2})\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_NOT_ANSWERS = frozenset(
    "The A An In On At It He She They His Her Its This That These Those There When Where While After Before "
    "During From With As By For Of And But Or If Also However January February March April May June July "
    "August September October November December".split()
)


def bridge_candidates(step_query: str, passages: list[str], question: str, limit: int = BRIDGES_PER_STEP) -> list[str]:
    """Spans of the step's best passages that could be the step's answer, best first: named in a sentence
    that covers the step's key terms, in a passage the search ranked high, and not already in the question."""
    wanted = key_terms(step_query)
    # the step's own words too: step 2 of "the city where Irwin Shaw was born" is not Irwin Shaw again
    asked = {t.lower() for t in re.findall(r"\w+", f"{question} {step_query}")}
    year_wanted = bool(re.match(r"\s*(?:in\s+)?(?:what|which)\s+year|\s*when\b", step_query, re.I))
    head = _step_head(step_query)
    scores: dict[str, float] = {}
    spelled: dict[str, str] = {}
    for rank, passage in enumerate(passages[:3]):
        for sentence in _SENTENCE.split(passage):
            found = terms(sentence)
            cover = len(wanted & found) / len(wanted) if wanted else 0.0
            if cover == 0.0:
                continue
            for match in _CANDIDATE.finditer(sentence):
                name = re.sub(r"'s$", "", match.group(0).strip(" .,'"))
                words = re.findall(r"\w+", name)
                if len(name) < 2 or name in _NOT_ANSWERS or not words:
                    continue
                if sum(w.lower() in asked for w in words) * 2 >= len(words):
                    continue  # mostly the question's own words: the question already searched them
                if match.start() == 0 and len(words) == 1 and name.lower() in sentence.lower()[1:]:
                    continue  # a capitalised first word that the text also writes in lower case
                if len(words) == 1 and _modifies(sentence[match.end() :]):
                    continue  # "an Australian race walker", "a Canadian actor": an adjective, not a name
                is_year = name.isdigit()
                if is_year and head and head not in _TIME_HEADS:
                    continue  # "the town where …" is no year
                score = cover + 0.5 / (rank + 1) + (0.3 if is_year == year_wanted else 0.0)
                score += _type_fit(head, name, sentence[: match.start()], sentence[match.end() :])
                score += 0.1 * min(len(words), 3) if not is_year else 0.0
                key = name.lower()
                if score > scores.get(key, 0.0):
                    scores[key], spelled[key] = score, name
    best = sorted(scores, key=lambda k: -scores[k])
    return [spelled[k] for k in best[:limit]]


# the noun a step asks for ("the town where …", "the author of …") says what kind of name answers it
_STEP_HEAD = re.compile(
    r"^(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}?(?P<head>[a-z][\w-]*)\s+(?:that|which|who|whom|whose|where|when|of)\b"
)
_TIME_HEADS = frozenset("year date day month decade century time age number population".split())
_SMALL_PLACES = frozenset("town city village suburb hamlet borough neighbourhood neighborhood".split())
_LARGE_PLACES = frozenset("state country province region county nation territory".split())
TYPE_BONUS = 0.3


def _step_head(step_query: str) -> str | None:
    match = _STEP_HEAD.match(step_query.strip())
    return match.group("head").lower() if match else None


def _type_fit(head: str | None, name: str, before: str, after: str) -> float:
    """Does the candidate look like the kind of thing the step asks for? In "born in Young, New South Wales" the
    town is the first of the pair and the state the second; "the university that …" is a name with University
    in it."""
    if head is None:
        return 0.0
    first_of_pair = bool(re.match(r",\s*[A-Z]", after))
    second_of_pair = bool(re.search(r"\b[A-Z][\w.]*,\s*$", before))
    if head in _SMALL_PLACES:
        return TYPE_BONUS * (first_of_pair - second_of_pair)
    if head in _LARGE_PLACES:
        return TYPE_BONUS * (second_of_pair - first_of_pair)
    return TYPE_BONUS if head in name.lower().split() else 0.0


# words that may follow a one-word name: a verb or a preposition, not the noun an adjective would modify
_AFTER_A_NAME = frozenset(
    "is was were are has had have and or in of on at to for by with from as that which who whose where when "
    "but than after before during since until into onto".split()
)


def _modifies(rest: str) -> bool:
    following = re.match(r"\s+([a-z][a-z-]*)\b", rest)
    if following is None:
        return False
    word = following.group(1)
    return word not in _AFTER_A_NAME and not word.endswith("ed")


def interleave(lists: list[list], key, skip: set | None = None) -> list:
    """Round-robin over ranked lists, each item once (and none of `skip`)."""
    out, seen = [], set(skip or ())
    for position in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if position < len(items) and key(items[position]) not in seen:
                seen.add(key(items[position]))
                out.append(items[position])
    return out


class StepAnswer(BaseModel):
    span: str = Field(default="", max_length=120, description="a short span copied from the passages, or empty")


EXTRACT_PROMPT = """Copy from the passages the shortest span (a name, title, place, date or number) that answers
the question. Copy it exactly; reply with an empty span if no passage answers it.
Reply with one JSON object: {"span": "..."}"""


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def extract_step_answer(
    ctx: AgentContext, step_query: str, passages: list[str], question: str, *, model: bool = True
) -> list[str]:
    """The step's answer: the local model's pick when it copied a span that is really in the evidence (a few
    tokens out), then the rule candidates (the only ones without a model)."""
    candidates = bridge_candidates(step_query, passages, question)
    if ctx.fast is None or not model or not passages:
        return candidates
    shown = "\n\n".join(f"[{i}] {text[:700]}" for i, text in enumerate(passages[:3], start=1))
    messages = [
        {"role": "system", "content": EXTRACT_PROMPT},
        {"role": "user", "content": f"Passages:\n{shown}\n\nQuestion: {step_query}"},
    ]
    picked, from_model = ctx.fast.structured(
        messages, StepAnswer, fallback=StepAnswer(), purpose="step_extract", max_tokens=40
    )
    span = " ".join(picked.span.split()).strip(" .,")
    evidence = " ".join(_normalised(p) for p in passages[:3])
    said = _normalised(span)
    if from_model and said and f" {said} " in f" {evidence} " and f" {said} " not in f" {_normalised(step_query)} ":
        return [span, *[c for c in candidates if c.lower() != span.lower()]][:BRIDGES_PER_STEP]
    return candidates


def _search(ctx: AgentContext, state, query: str, number: int) -> list[Evidence]:
    """One step's search, through the same runner as every tool call (gating, ACL, audit, timeout)."""
    tool = "hybrid_search" if "hybrid_search" in ctx.tools else "vector_search"
    if tool not in ctx.tools:
        return []
    request = TaskRequest(
        trace_id=ctx.trace_id,
        parent_task_id=f"node:tool_exec:{state.get('iteration', 0)}:step{number}",
        tool=tool,
        input={"query": query[:300], "top_k": ctx.settings.evidence_top_k},
        auth_scope=list(getattr(ctx.tools[tool], "auth_scope", ())),
    )
    (result,) = ctx.runner.run_many([request], ctx.tools, ctx.tool_ctx)
    return list(result.evidence) if result.status == "ok" else []


def run_steps(ctx: AgentContext, state, plan: StepPlan, first: list[Evidence]) -> tuple[list[Evidence], list[dict]]:
    """Run the plan's steps in order after the question's own search (`first`); returns the evidence of every
    round merged (the question's two best first, then the rounds in turn, the last step's first) and the trace."""
    question = " ".join(state["query"].split())  # as decompose() wrote it: its own step is not searched again
    answers: list[str] = []
    alternates: list[str | None] = []  # each step's second-best answer: the next step searches it too
    rounds: list[list[Evidence]] = []
    last: list[list[Evidence]] = []
    trace: list[dict] = []
    for number, step in enumerate(plan.steps[:MAX_STEPS], start=1):
        needed = [int(n) for n in re.findall(r"#(\d)", step)]
        if any(n > len(answers) for n in needed):
            trace.append({"step": number, "query": step, "skipped": "an earlier step found no answer"})
            break
        queries = [substitute(step, answers)]
        alternate = alternates[needed[-1] - 1] if needed else None
        if alternate:
            queries.append(substitute(step.replace(f"#{needed[-1]}", alternate), answers))
        ctx.emit({"type": "step", "label": f"🔍 step {number}/{len(plan.steps)}: {queries[0][:80]}"})
        found: list[Evidence] = []
        for query in queries:
            hits = first if query == question else _search(ctx, state, query, number)
            rounds.append(hits)
            found += hits
        last = rounds[-len(queries) :]
        record: dict = {"step": number, "query": queries[0], "searched": queries, "found": len(found)}
        trace.append(record)
        if number == len(plan.steps):
            break
        # a shape the rules could not read costs no model call: its bridge is picked by rule
        picks = extract_step_answer(
            ctx, queries[0], [e.text for e in found[:3]], question, model=plan.rule != "bridge_entity"
        )
        record["answer"] = picks[0] if picks else None
        if len(picks) > 1:
            record["alternate"] = picks[1]
        if not picks:
            break
        answers.append(picks[0])
        alternates.append(picks[1] if len(picks) > 1 else None)
    # the question's own two best and the documents they name by title (the search's second hop) stay on top;
    # then the last step's search (its bridge put in) beside the question's next passages; the alternate
    # bridge and the earlier steps (which mostly re-find the question's passages) after
    head = first[:2] + [e for e in first[2:] if e.scores.get("link")]
    best, other_bridges = (last[0], last[1:]) if last else ([], [])
    earlier = rounds[: len(rounds) - len(last)]
    rest = [e for e in first[2:] if not e.scores.get("link")]
    # one place in the top for the step's best (unless the question found it): a wrong bridge costs one passage
    merged = head + [e for e in best[:1] if _key(e) not in {_key(h) for h in head}]
    lists = [rest, best[1:], *other_bridges, *earlier]
    return merged + interleave(lists, _key, skip={_key(e) for e in merged}), trace


def _key(item: Evidence):
    return item.key
