"""Sequential multi-step retrieval: a question that hides its second entity ("who directed the film that was
shot in Leland in 1986?") is answered in ordered steps. Step 1 finds the hidden entity ("the film that was
shot in Leland in 1986"), a bounded extraction names it ("Blue Velvet"), and the next step searches with the
name in place of `#1` ("Who directed Blue Velvet?").

Decomposition is by rule (agent/step_rules.py), so the path works with no model at all; extraction copies a
span out of the step's own evidence (the local model may pick it, never invent it). The original question keeps its own search in
every round, and the rounds' lists are interleaved, so a step that goes astray costs little."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from kb_agent.agent.context import AgentContext
from kb_agent.agent.evidence_units import terms
from kb_agent.agent.question_terms import key_terms
from kb_agent.agent.step_rules import GUESSED_BRIDGE, NAME_PARTICLES, StepPlan, substitute
from kb_agent.tools.base import Evidence
from kb_agent.tools.search_tools import BURIED
from kb_agent.tools.tasks import TaskRequest

MAX_STEPS = 3
BRIDGES_PER_STEP = 2  # a step's two best candidates are both searched: a wrong first pick costs one search

# a candidate answer: a run of capitalised words (inner "of", "the", "de", "and" allowed), a year, or a number
_NAME_WORD = r"(?:[A-Z]\.(?:\s?[A-Z]\.)*\s?[A-Z][\w&'-]*|[A-Z][\w.&'-]*)"
_CANDIDATE = re.compile(
    rf"\b{_NAME_WORD}(?:\s+(?:{NAME_PARTICLES})\s+{_NAME_WORD}|\s+{_NAME_WORD})*"
    r"|\b(?:1[0-9]{3}|20[0-9]{2})\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_NOT_ANSWERS = frozenset(
    "The A An In On At It He She They His Her Its This That These Those There When Where While After Before "
    "None True False "
    "During From With As By For Of And But Or If Also However January February March April May June July "
    "August September October November December".split()
)


def bridge_candidates(
    step_query: str, passages: list[str], question: str, limit: int = BRIDGES_PER_STEP, *, guessed: bool = False
) -> list[str]:
    """Spans of the step's best passages that could be the step's answer, best first: named in a sentence
    that covers the step's key terms, in a passage the search ranked high, and not already in the question.
    `guessed`: the step is the whole question (no rule read it): its words tie no name to one relation."""
    wanted = key_terms(step_query)
    # the step's own words too: step 2 of "the city where Irwin Shaw was born" is not Irwin Shaw again
    asked = {t.lower() for t in re.findall(r"\w+", f"{question} {step_query}")}
    said = f" {_normalised(question)} {_normalised(step_query)} "
    cues = set() if guessed else _relation_cues(step_query, wanted)
    # "… Paddy and Buck on Scaredy Squirrel": the step's own names, then a preposition, then the name asked
    named = set() if guessed else {w.lower() for w in re.findall(r"\b[A-Z][\w'-]*", step_query)} - {"the", "a", "an"}
    verbs = terms(" ".join(re.findall(r"\b[a-z]+(?:ed|ing)\b", step_query))) & cues
    year_wanted = bool(re.match(r"\s*(?:in\s+)?(?:what|which)\s+year|\s*when\b", step_query, re.I))
    head = _step_head(step_query)
    scores: dict[str, float] = {}
    spelled: dict[str, str] = {}
    for rank, passage in enumerate(passages[:3]):
        sentences = _SENTENCE.split(passage)
        subject = _record_subject(sentences)
        if subject and f" {_normalised(subject)} " in said:
            subject = ""  # the question's own name is no answer of its step
        for at, sentence in enumerate(sentences):
            found = terms(sentence)
            found |= {kin for kin, inverse in _KIN_INVERSES.items() if inverse & found}  # "the son of" is a father
            found |= {f + agent for f in found for agent in ("er", "or", "r")}  # "founded" says who its founder is
            cover = len(wanted & found) / len(wanted) if wanted else 0.0
            if cover == 0.0:
                continue
            if subject and at > 0 and _PRONOUN_SUBJECT.match(sentence):
                # "He founded DEM Inc. …": the record's subject did it, named where the record opens
                score = cover + 0.5 / (rank + 1) + 0.1 * min(len(subject.split()), 3) + BESIDE_BONUS
                if score > scores.get(subject.lower(), 0.0):
                    scores[subject.lower()], spelled[subject.lower()] = score, subject
            for match in _CANDIDATE.finditer(sentence):
                name = re.sub(r"'s$", "", match.group(0).strip(" .,'"))
                words = re.findall(r"\w+", name)
                if len(name) < 2 or name in _NOT_ANSWERS or not words:
                    continue
                # (not the kind the step asks for: "County" of "Honolulu County", asked "the county containing …")
                echoed = sum(w.lower() in asked and w.lower() != head for w in words) * 2
                if f" {_normalised(name)} " in said or echoed > len(words) or (echoed == len(words) < 4):
                    continue  # mostly the question's own words (half of a long title may be: "A Very Brady Sequel")
                if words[0] in _PREPOSITIONS and " ".join(words[1:]) in _NOT_ANSWERS:
                    continue  # "In February" at a sentence's start is no name
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
                score += _beside(cues, verbs, sentence[: match.start()], sentence[match.end() :])
                # (not a title's last word: "The Wilde Family at Sea")
                score += BESIDE_BONUS * bool(
                    named and len(words) > 1 and _after_named(named, sentence[: match.start()])
                )
                key = name.lower()
                if score > scores.get(key, 0.0):
                    scores[key], spelled[key] = score, name
    best = sorted(scores, key=lambda k: -scores[k])
    return [spelled[k] for k in best[:limit]]


# an encyclopedia record's sentence that goes on about its subject, and the opening that names it ("Demos
# Yu-bou Chiang (), born on …, is a Taiwanese businessman.")
_PRONOUN_SUBJECT = re.compile(r"(?:He|She|It|They)\s+[a-z]")
_OPENS_RECORD = re.compile(
    r"^[\"']?(?P<name>[A-Z][^(),;]{1,60}?)\s*(?:\([^)]*\)\s*)?(?:,[^;]{0,80}?,\s*|\s)(?:is|was|are|were)\s"
)


def _record_subject(sentences: list[str]) -> str:
    """The name a record opens with when its first sentence says what it is; "" otherwise."""
    opening = _OPENS_RECORD.match(sentences[0].strip()) if sentences else None
    name = opening.group("name").strip() if opening else ""
    return name if name and _CANDIDATE.fullmatch(name) else ""


# the noun a step asks for ("the town where …", "the author of …") says what kind of name answers it
_STEP_HEAD = re.compile(
    r"^(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}?(?P<head>[a-z][\w-]*)\s+(?:(?:that|which|who|whom|whose|where|when|of|behind"
    r"|containing|including|housing|hosting|bordering|surrounding|featuring|starring)\b|(?-i:[A-Z]))"
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
    if head in name.lower().split():  # "the county containing Kunia Camp": Honolulu County, not Hawaii after it
        return TYPE_BONUS
    if _done_by(head, before):  # "the producer who …": "…, produced by Trent Reznor", not the title's "Oliver Stone"
        return TYPE_BONUS
    first_of_pair = bool(re.match(r",\s*[A-Z]", after))
    second_of_pair = bool(re.search(r"\b[A-Z][\w.]*,\s*$", before))
    if head in _SMALL_PLACES:
        return TYPE_BONUS * (first_of_pair - second_of_pair)
    if head in _LARGE_PLACES:
        return TYPE_BONUS * (second_of_pair - first_of_pair)
    return 0.0


_AGENT_OF = re.compile(r"\b([a-z]+?)e?d\s+by\s*$")


def _done_by(head: str, before: str) -> bool:
    """Asked for the one who does something ("producer", "director", "founder"), the name right after "<that
    verb>ed by"."""
    agent = _AGENT_OF.search(before)
    if agent is None or not re.search(r"(?:er|or)$", head):
        return False
    stem = agent.group(1)
    return len(stem) >= 4 and head.startswith(stem)


_PREPOSITIONS = frozenset("In On At During From With As By For Of After Before Since Until".split())
# "Chiang Ching-kuo was the son of … Chiang Kai-shek": asked the father, the line states the son's side
_KIN_INVERSES = {
    "father": {"son", "daughter", "child", "children"},
    "mother": {"son", "daughter", "child", "children"},
    "parent": {"son", "daughter", "child", "children"},
    "son": {"father", "mother", "parent"},
    "daughter": {"father", "mother", "parent"},
    "child": {"father", "mother", "parent"},
    "husband": {"wife", "marri"},
    "wife": {"husband", "marri"},
    "spous": {"wife", "husband", "marri"},
}
_SKIPPED = frozenset("of the a an to his her its their late and".split())
_COPULA = frozenset("is was are were".split())
BESIDE_BONUS = 0.3


def _relation_cues(step_query: str, wanted: set[str]) -> set[str]:
    """The step's relation words and numbers ("girlfriend", "followed", "834"), not its names: a name right
    beside one of them in a sentence is tied to it ("his girlfriend, Kate Ramsay")."""
    names = terms(" ".join(re.findall(r"\b[A-Z][\w'-]*", step_query)))
    cues = wanted - names
    for kin in list(cues):
        cues |= _KIN_INVERSES.get(kin, set())
    return cues


def _beside(cues: set[str], verbs: set[str], before: str, after: str) -> float:
    """BESIDE_BONUS when a cue word is the nearest content word before the candidate or right after it, less
    further away, and less for a noun than for the step's verb ("sequel to The Brady Bunch Movie" < "following
    A Very Brady Sequel"). After the candidate only a noun or a number counts ("Zimbabwe, 834 km"), or what
    "X is the first EP …" defines X as. A semicolon ends a list item: "1544 km ; South Africa" is not South
    Africa's km."""
    if not cues:
        return 0.0
    before, after = before.rsplit(";", 1)[-1], after.split(";", 1)[0]
    near_before = [w for w in re.findall(r"[\w-]+", before)[-6:] if w.lower() not in _SKIPPED][-3:][::-1]
    following = [w for w in re.findall(r"[\w-]+", after)[:6] if w.lower() not in _SKIPPED]
    near_after = following[1:4] if following[:1] and following[0].lower() in _COPULA else following[:1]
    found = [(1.0 / d, terms(w) & cues) for d, w in enumerate(near_before, start=1) if not w[0].isupper()]
    found += [(1.0, terms(w) & (cues - verbs)) for w in near_after]  # "X, following Y": X is no object of it
    found = [f for f in found if f[1]]
    if not found:
        return 0.0
    weight, hit = max(found, key=lambda f: (f[0], bool(f[1] & verbs)))
    return BESIDE_BONUS * weight * (1.0 if hit & verbs or not verbs else 2 / 3)


_NAMED_ON = re.compile(r"\b([A-Z][\w'-]*)\s+(?:on|in|from|for)\s+[\"'“]?$")


def _after_named(named: set[str], before: str) -> bool:
    """The candidate follows one of the step's own names and a preposition ("Paddy and Buck on Scaredy Squirrel"
    for "the show where David Berni voices Paddy and Buck")."""
    found = _NAMED_ON.search(before)
    return bool(found and found.group(1).lower() in named)


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
    ctx: AgentContext, step_query: str, passages: list[str], question: str, *, model: bool = True, guessed: bool = False
) -> list[str]:
    """The step's answer: the local model's pick when it copied a span that is really in the evidence (a few
    tokens out), then the rule candidates (the only ones without a model)."""
    candidates = bridge_candidates(step_query, passages, question, guessed=guessed)
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


def run_steps(
    ctx: AgentContext, state, plan: StepPlan, first: list[Evidence], *, model: bool = True
) -> tuple[list[Evidence], list[dict]]:
    """Run the plan's steps in order after the question's own search (`first`); returns the evidence of every
    round merged (the question's two best first, then the rounds in turn, the last step's first) and the trace.
    `model=False`: every bridge is picked by rule, no model call."""
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
        guessed = plan.rule == GUESSED_BRIDGE
        picks = extract_step_answer(
            ctx, queries[0], [e.text for e in found[:3]], question, model=model and not guessed, guessed=guessed
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
    rest = [e for e in first[2:] if not e.scores.get("link") and not e.scores.get(BURIED)]
    # one place in the top for the step's best (unless the question found it): a wrong bridge costs one passage
    merged = head + [e for e in best[:1] if _key(e) not in {_key(h) for h in head}]
    lists = [rest, best[1:], *other_bridges, *earlier]
    merged += interleave(lists, _key, skip={_key(e) for e in merged})
    # the keyword side's near-best read from far below the fused top: after every step's passages
    kept = {_key(e) for e in merged}
    return merged + [e for e in first if e.scores.get(BURIED) and _key(e) not in kept], trace


def _key(item: Evidence):
    return item.key
