"""Rule decomposition of a multi-step question into ordered steps, so the multi-step path works with no model:
"Who directed the film that was shot in Leland in 1986?" -> "the film that was shot in Leland in 1986", then
"Who directed #1?" (`#1` stands for step 1's answer). Relative clauses, possessives, "the X of Y" relations,
role names ("the Green performer") and a relation nested inside a step (three steps at most)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb_agent.agent.main_clause import ASKED_IN_CLAUSE, context_first, subject_clause
from kb_agent.agent.relative_clauses import asks_more as _asks_more
from kb_agent.agent.relative_clauses import inner_relative as _inner_relative
from kb_agent.agent.relative_clauses import relative_clauses as _relative_clauses
from kb_agent.agent.relative_clauses import right_branching as _right_branching
from kb_agent.agent.shape import question_shape
from kb_agent.text.tokenize import has_cjk

# lower-case particles inside a name: "Cynfyn ap Gwersytan", "Ludwig van Beethoven", "Osama bin Laden"
NAME_PARTICLES = "of|the|de|la|le|da|di|du|del|der|den|van|von|ap|bin|ibn|al|and|for|&"
# the rule of a bridge guessed in front of a question whose shape no rule read ("#1 <question>"): no reading of it
GUESSED_BRIDGE = "bridge_entity"
_ENTITY = rf"(?:[A-Z][\w.&'-]*|\"[^\"]+\")(?:\s+(?:(?:{NAME_PARTICLES})\s+)*[A-Z][\w.&'-]*)*"
# "the director of film Wild Horses", "the author of the novel Lucy Crown": the kind of work before its name
# (and what describes it: "the Seoul rock band Drug Restaurant", "the 1950 West German crime picture Third …")
_KIND = (
    r"(?:(?:the\s+)?(?:[\w-]+\s+){0,5}?(?:film|movie|picture|song|album|single|novel|book|poem|play|opera|show|"
    r"series|drama|sitcom|game|band|group|duo|team|club|company|label|magazine|festival|tournament)\s+)?"
)
# "the National Football League" (two words or more: "the API clients", "the JWT sub key" are no names)
_NAMED = _KIND + rf"(?:the\s+(?=[A-Z][\w.&'-]*\s+(?:(?:{NAME_PARTICLES})\s+)*[A-Z]))?" + _ENTITY
# "the spouse of the director of Titanic": the innermost relation is asked first
_OF_CHAIN = re.compile(
    rf"\b(?P<head>the\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+of)\s+(?P<inner>the\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+of\s+{_NAMED})"
)
# "Charlene Choi's first EP", "Armando Iannucci's frequent collaborator": a word that qualifies the relation
_QUALIFIERS = (
    "first|second|third|last|latest|debut|eldest|youngest|only|elder|older|younger|former|late|current|frequent|"
    "longtime|long-time|original|previous|next|best|biological|twin"
)
_POSSESSIVE = re.compile(
    rf"\b(?P<owner>{_ENTITY})'s\s+(?P<thing>(?:(?:{_QUALIFIERS})\s+)?(?:[a-z][\w-]*|[A-Z]{{2,4}}(?![\w-])))"
    r"(?![\w-])"
)
# "the Scottish aviator " right before the owner's name: a description of the owner (not a relation: "the
# great-grandfather of", "the actress who played")
_DESCRIBES_OWNER = re.compile(
    r"\b(?i:the)\s+(?:(?!(?:of|for|to|in|on|at|by|with|from|who|whom|which|that|whose)\b)[A-Za-z][\w-]*(?<!ed)\s+){1,3}$"
)
# "Armando Iannucci's collaborator Adam Tandy": the possessive's thing is named right after it, no step hides it
_NAMED_AFTER = re.compile(r"\s+[A-Z][a-z][\w.'-]*")  # a name, not an acronym ("FastAPI's request ID")
# "Where was the author of Lucy Crown born?": one relation of a named entity, and something else is asked of it
# ("the filmmaker behind Third from the Right": who made it)
_OF_ONE = re.compile(rf"\b(?P<inner>the\s+(?:[a-z][\w-]*\s+){{0,2}}?(?P<head>[a-z][\w-]*)\s+(?:of|behind)\s+{_NAMED})")
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
_DESCRIBED = re.compile(r"\s+(?:who|that|whose)\b")
# a relative clause without its pronoun whose subject is a name, ending the question: "the team Honey Lemon
# belongs to", "the label Big Boi records for"
_CONTACT = re.compile(
    rf"\b(?P<np>the\s+(?:[\w-]+\s+){{0,2}}?[a-z][\w-]*)\s+(?P<agent>{_ENTITY})\s+"
    r"(?P<verb>[a-z]{3,}(?:s|ed))\s+(?P<prep>to|for|in|with|on|at|from|of)\s*(?=\?|$)"
)
# a relation read as a present participle before a name: "the county containing Kunia Camp"
_CONTAINING = re.compile(
    rf"\b(?P<np>the\s+(?:[\w-]+\s+){{0,2}}?[a-z][\w-]*)\s+(?P<verb>containing|including|housing|hosting|"
    rf"bordering|surrounding|featuring|starring|owning|employing|sponsoring|representing)\s+(?P<agent>{_ENTITY})"
)
# "When was the institute that owned The Collegian founded?": after an inverted "was", the clause's last word
# is the main clause's participle; after "did", its bare verb ("... die?", "... break up?")
_INVERTED = re.compile(
    r"^(?:when|where|why|how(?:\s+(?:many|much)\s+[a-z]+|\s+(?:long|old|far|often))?"
    r"|(?:(?:in|at|on|from|for|to|by)\s+)?(?:what|which)(?:\s+[a-z]+){1,2})\s+"
    r"(?P<aux>was|were|is|are|did|does|do)",
    re.I,
)
_INVERTED_OF = re.compile(_INVERTED.pattern + r"\s+(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}of", re.I)
_YES_NO_OPENING = re.compile(r"^(?:is|are|was|were|can|could|does|do|did|will|would|should|has|have|had)\b", re.I)
# a relative clause without its pronoun: "the band co-founded by a former student of Joe Satriani", "the
# organization formerly known as Science Service" - the agent must name someone (a capital letter)
_REDUCED = re.compile(
    r"\b(?P<np>(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}?[a-z][\w-]*)\s+"
    r"(?P<verb>(?:(?:formerly|originally|first|later|also|jointly|once)\s+)?"
    r"(?:(?:[a-z]+-)?[a-z]{3,}ed|known|written|made|built|sung|held|run|led|founded|spun))\s+"
    r"(?P<prep>by|as)\s+(?P<agent>[^?,;]+?)\s*(?=[?,;]|$)"
)
# "after her debut in …": a bare verb after one of these is a noun
_DETERMINERS = frozenset("the a an her his its their my our your this that whose".split())
_PARTICIPLE = re.compile(
    r"(?:\w+(?:ed|en)|born|built|made|held|won|sold|shot|set|found|known|buried|written|drawn|begun|run|hit|put)",
    re.I,
)
# after "did / does / do" the main verb is bare and its phrase may run on ("... win its first title?", "... gain
# independence?", "... first appear?"): where one of these bare verbs (or "first" / "last" before one) opens it,
# the relative clause ends before it. The clause's own verb is inflected ("played", "makes"), so not taken.
_BARE_VERBS = frozenset(
    "win lose die retire become begin start end stop break form join leave gain get go take make have hold open "
    "close marry divorce move release sign play enter receive reach return debut found acquire merge split launch "
    "host adopt abolish introduce invade declare first last appear air premiere graduate attend earn achieve "
    "change rename publish record perform finish complete run stay remain live work serve spend sell".split()
)
_PLACES_AND_FRAMES = frozenset(
    "island city town village state county province district country region kingdom republic empire name title "
    "year month day number kind type sort part rest end beginning corner side edge top bottom middle centre center "
    # "the request-body counterpart of Query and Path": a thing like the named one, asked about directly
    "counterpart equivalent analogue alternative".split()
)
_VERBNAME_PARTICLES = frozenset("up down out off on over away back".split())
# after an inverted "was": "associated with", "based in", "known for"
_VERB_PREPOSITIONS = frozenset("with in for to at from by as".split())
# a relative clause that only qualifies the answer ("which city ... that ...") is not a hidden entity
_ASKED_HEAD = re.compile(r"^(?:which|what|how many)\b", re.I)
# "What is the name of the cookie that … reads?": the name of the thing the clause describes is asked
_ASKED_NAME = re.compile(r"^(?:what|which)(?:'s|\s+(?:is|are|was|were))\s+the\s+names?\s+of$", re.I)
_COMPARISON = re.compile(
    r"\b(both|neither|either|same|different|compared?|versus|(?-i:[Vv]s)|older|younger|earlier|later|first|more|less)\b"
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
    return _nested(plan) if plan and plan.rule != GUESSED_BRIDGE else plan


def _possessive(text: str) -> re.Match | None:
    """ "Titanic's director": a relation of a name. Not "FastAPI's built-in …" (an adjective) nor "Iannucci's
    collaborator Adam Tandy" (the thing is named right after it)."""
    owner = _POSSESSIVE.search(text)
    if owner and (owner.group("thing").split()[-1] in _NOT_THINGS or _NAMED_AFTER.match(text, owner.end())):
        return None
    return owner


def possessive_owner(question: str) -> str | None:
    """The name a possessive step starts from ("Big Boi" of "Big Boi's album"), if the question has one."""
    owner = _possessive(" ".join(question.split()))
    return owner.group("owner") if owner else None


def has_bridge_shape(question: str) -> bool:
    """The question reaches its answer through something it only describes: a relative clause ("the university
    that runs Toad Hall"), a possessive ("Big Boi's album"), a relation of a name ("the publisher of The Orange
    Eats Creeps"). The lines that say the question's words are then not the lines that state the answer."""
    return bool(_relative_clauses(question) or _possessive(question) or _OF_ONE.search(question))


# "when" relates a clause to a noun of time only ("the year when …"); after any other noun it says under what
# condition ("the body when a path operation has two body parameters"): one lookup, not a chain
# the main clause's participle between a noun and its clause ("When was the producer born who compiled …?")
_EXTRAPOSED = frozenset("born died founded formed released established built published".split())


def is_comparison(question: str) -> bool:
    """ "Is A or B better?", "both", "earlier": two lookups compared, not a chain (no steps by rule)."""
    return bool(_COMPARISON.search(question))


def _two_steps(text: str) -> StepPlan | None:
    context = context_first(text)
    if context:
        # "The director of … also made a 1970 sex comedy; under what title was it released in the USA?": what the
        # statement describes first (in steps of its own when it hides one), then the question about it
        statement, asked = context
        described = _two_steps(statement)
        if described and described.rule != GUESSED_BRIDGE and len(described.steps) == 2:
            return StepPlan([*described.steps, f"#2 {asked}"], f"{described.rule}+context")
        return StepPlan([statement, f"#1 {asked}"], "context_clause")
    chain = _OF_CHAIN.search(text)
    if chain:
        outer = text[: chain.start("inner")] + "#1" + text[chain.end("inner") :]
        return StepPlan([chain.group("inner"), outer], "of_chain")
    owner = _possessive(text)
    if owner:  # "Titanic's director"
        # "The Scottish aviator Jim Mollison's wife": what describes the owner goes with it
        description = _DESCRIBES_OWNER.search(text[: owner.start()])
        start = description.start() if description else owner.start()
        who = re.sub(r"^The\b", "the", description.group(0).strip()) + " " if description else ""
        inner = f"the {owner.group('thing')} of {who}{owner.group('owner')}"
        return StepPlan([inner, text[:start] + "#1" + text[owner.end() :]], "possessive")
    role = _NAME_ROLE.search(text)
    if role and not _DESCRIBED.match(text, role.end()):  # "the Canadian performer who plays …": a description
        outer = text[: role.start()] + "#1" + text[role.end() :]
        if _asks_more(outer):  # "Who is the spouse of #1?", not "Who is #1?"
            return StepPlan([f"the {role.group('role')} of {role.group('owner')}", outer], "name_role")
    for match in _relative_clauses(text):
        before = text[: match.start()].strip()
        if _ASKED_HEAD.match(before) and (len(before.split()) <= 2 or _ASKED_NAME.search(before)):
            continue  # "which city is the band that ...": the clause names the band, the band is asked
        noun_phrase, rel, clause = match.group("np"), match.group("rel"), match.group("clause").strip(" ,.")
        if len(clause.split()) < 2:
            continue
        *head, last = noun_phrase.split()
        if last in _EXTRAPOSED and len(head) >= 2:  # "When was the musician born who put out …?": born is asked
            outer = f"{text[: match.start()]}#1 {last}?"
            return StepPlan([f"{' '.join(head)} {rel} {clause}", outer], "relative_clause")
        nested = _inner_relative(clause)
        if nested:  # "the book series on which the show where D. B. voices Paddy is based": the show first
            return _inner_plan(text, match, nested)
        subject = subject_clause(before, noun_phrase, rel, clause)
        if subject:  # "The man who beat Pete Ashdown … | had been an executive at which company?"
            first, main = subject
            return StepPlan([first, f"#1 {main}{text[match.end() :]}"], "subject_clause")
        if ASKED_IN_CLAUSE.search(clause):  # the clause holds the question: find the noun phrase's entity first
            first = (text[: match.end("np")] + " " + text[match.end() :]).strip(" ?")
            return StepPlan([first, f"#1 {clause}"], "relative_clause_asked")
        clause, main_verb = _main_verb(before, clause)
        outer = (text[: match.start()] + "#1" + (f" {main_verb}" if main_verb else "") + text[match.end() :]).strip()
        if len(outer.split()) < 2:
            continue
        return StepPlan([f"{noun_phrase} {rel} {clause}", outer], "relative_clause")
    for shape, rule in ((_CONTACT, "contact_clause"), (_CONTAINING, "participle_clause")):
        found = shape.search(text)
        if found and rule == "contact_clause" and found.group("verb").endswith("ed") and _INVERTED.match(text):
            found = None  # "… was the story behind X associated with?": the main clause's participle
        outer = text[: found.start()] + "#1" + text[found.end() :] if found else ""
        if found and _asks_more(outer):
            return StepPlan([found.group(0), outer], rule)
    # "Is sending a body with a GET request supported by FastAPI?": a yes-no question's passive is its own verb
    reduced = None if _YES_NO_OPENING.match(text) else _REDUCED.search(text)
    # "… the song written by Ronnie Scott, My Guns Are Loaded, …": named right after, no step hides it
    if reduced and _names_someone(reduced.group("agent")) and not re.match(r",\s*[A-Z]", text[reduced.end() :]):
        agent, main_verb = _main_verb(text[: reduced.start()].strip(), reduced.group("agent"))
        outer = (
            text[: reduced.start()] + "#1" + (f" {main_verb}" if main_verb else "") + text[reduced.end() :]
        ).strip()
        if _asks_more(outer):  # "What is the class used by Starlette?" asks nothing more of it
            first = f"{reduced.group('np')} {reduced.group('verb')} {reduced.group('prep')} {agent}"
            return StepPlan([first, outer], "reduced_clause")
    relation = _OF_ONE.search(text)
    if relation and _of_relation_is_a_bridge(text, relation):
        return StepPlan(
            [relation.group("inner"), text[: relation.start()] + "#1" + text[relation.end() :]], "of_relation"
        )
    if question_shape(text) != "simple" and not is_comparison(text):
        # not plainly one lookup, no shape found: the question's own passages may name its bridge
        return StepPlan([text, f"#1 {text}"], GUESSED_BRIDGE)
    return None


def _inner_plan(text: str, match: re.Match, inner: tuple[re.Match, str, str]) -> StepPlan:
    """ "Who wrote the book series on which the show where D. B. voices Paddy is based?" -> "the show where D. B.
    voices Paddy", "the book series on which #1 is based", "Who wrote #2?"."""
    found, core, tail = inner
    clause = match.group("clause")
    first = f"{found.group('np')} {found.group('rel')} {core}"
    tail, main_verb = _main_verb(text[: match.start()].strip(), tail)
    middle = f"{match.group('np')} {match.group('rel')} {clause[: found.start()]}#1 {tail}"
    outer = (text[: match.start()] + "#2" + (f" {main_verb}" if main_verb else "") + text[match.end() :]).strip()
    return StepPlan([first, " ".join(middle.split()), outer], "relative_clause+nested")


def _names_someone(agent: str) -> bool:
    """A reduced clause's agent names someone: a capitalised word, not code ("declared as `str | None`")."""
    return "|" not in agent and "`" not in agent and re.search(r"\b(?!(?:None|True|False)\b)[A-Z]", agent) is not None


def _of_relation_is_a_bridge(text: str, relation: re.Match) -> bool:
    """ "the author of Lucy Crown" is a hidden person; "the island of Oahu" is Oahu, "the forming of X or the
    birth of Y" a comparison, "the mother of Edward Stafford, 4th Baron Stafford" a name that goes on."""
    after = text[relation.end() :]
    if re.search(r"\bas\s*$", text[: relation.start()]):  # "resigned as the president of Israel": a role held
        return False
    if is_comparison(text) or relation.group("head") in _PLACES_AND_FRAMES or re.match(r",\s*(?:\d|[A-Z])", after):
        return False
    return _asks_more(text[: relation.start()] + "#1" + after)


_OF_BRIDGE = re.compile(r"\bthe\s+(?:[a-z][\w-]*\s+)?(?P<head>[a-z][\w-]*)\s+of\s+#1\b")


def _nested(plan: StepPlan) -> StepPlan:
    """A two-step plan whose first step hides a relation of its own ("the city where the author of Lucy Crown
    was born") or whose second asks a relation of the bridge and then something more ("Where was the father of
    #1 born?") gets that relation as a step of its own."""
    if len(plan.steps) != 2:
        return plan
    first, outer = plan.steps
    if plan.rule != "relative_clause" and "#1" in outer:
        # "… the actress who played #1 in Neighbours play on …": the rest still hides someone (#1's actress)
        rest = _two_steps(outer)
        if rest and rest.rule == "relative_clause" and "#1" in rest.steps[0]:
            return StepPlan([first, rest.steps[0], rest.steps[1].replace("#1", "#2")], plan.rule + "+clause")
    inner = _right_branching(first) if plan.rule == "relative_clause" else None
    if inner is not None:  # "the producer who compiled the soundtrack of the 1994 film in which T. S. had a role"
        return StepPlan([inner[0], inner[1], outer.replace("#1", "#2")], plan.rule + "+nested")
    relation = _OF_ONE.search(first)
    # inside a noun phrase's clause ("the city where …"), not the phrase the clause qualifies ("the president of
    # Israel whose …") nor a statement's object ("provided the voice of Rosie on …", a relative_clause_asked step)
    nested_in_clause = (
        plan.rule in ("relative_clause", "reduced_clause") and relation is not None and relation.start() > 0
    )
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
    # the clause's noun phrase is the inverted subject itself, or ends it ("When was the third album of | the
    # rapper whose …")
    inverted = _INVERTED.fullmatch(before) or _INVERTED_OF.fullmatch(before)
    words = clause.split()
    if not inverted or len(words) < 3:
        return clause, ""
    if inverted.group("aux").lower() in {"did", "does", "do"}:
        opens = next(
            (i for i in range(2, len(words)) if words[i] in _BARE_VERBS and words[i - 1].lower() not in _DETERMINERS),
            None,
        )
        if opens is not None:  # "played for | win its first title", "is located | gain independence"
            return " ".join(words[:opens]), " ".join(words[opens:])
    copula = inverted.group("aux").lower() in {"was", "were", "is", "are"}
    particles = _VERBNAME_PARTICLES | (_VERB_PREPOSITIONS if copula else frozenset())
    take = 2 if words[-1].lower() in particles and len(words) >= 4 else 1
    verb, rest = words[-take:], words[:-take]
    if not verb[0].islower():
        return clause, ""
    if copula and not _PARTICIPLE.fullmatch(verb[0]):
        return clause, ""
    if take == 2 and not any(w.islower() for w in rest[1:]):
        return clause, ""  # "the team that Dick Humbert | played for": the clause keeps its only verb
    return " ".join(rest), " ".join(verb)


def substitute(step: str, answers: list[str]) -> str:
    for number, answer in enumerate(answers, start=1):
        step = step.replace(f"#{number}", answer)
    return step
