"""Where a declarative question's main clause begins when its subject carries a relative clause: "The man who
beat Pete Ashdown for the nomination | had been an executive at which company?". The subject (with its clause)
is one lookup, the main clause asks something of what it finds. Likewise a statement before a question that
points back to it ("…; who directed that remake?")."""

from __future__ import annotations

import re

# a question word inside a clause: "… broadcast on what station?"; "when" / "where" / "who" mid-clause join
# a clause of their own ("premier of South Australia when William Copley was minister"), unless they end it
ASKED_IN_CLAUSE = re.compile(r"\b(?:what|which|whom|how)\b|\b(?:who|when|where)\s*$", re.I)
_AUXILIARIES = frozenset("is was were are has had have did does do can could will would may might".split())
# a verb group goes on after these: "had been", "was nicknamed", "has also won"
_ADVERBS = frozenset("also later then still once".split())
_GROUP_GOES_ON = _AUXILIARIES | _ADVERBS | frozenset("be been being having".split())
_IRREGULAR_PAST = frozenset(
    "beat won made took held led gave became began ran sold left built wrote drew grew fought lost met paid said saw "
    "sent sang spoke stood taught told threw went came chose broke brought bought caught fled flew got kept knew "
    "rode rose shot spent struck swore swam wore understood oversaw withdrew".split()
)
_DETERMINERS = frozenset("the a an its his her their this that these those".split())
_PREPOSITIONS = frozenset("to for with in on at by of from".split())
_NESTED = frozenset("that which who whom where whose".split())


def _finite(words: list[str], i: int) -> bool:
    """words[i] opens a finite verb group (not a participle inside one, an adjective or a reduced clause)."""
    word, before = words[i], (words[i - 1].lower() if i else "")
    if not word.islower() or before in _GROUP_GOES_ON - _ADVERBS:
        return False
    if word in _AUXILIARIES or word in _IRREGULAR_PAST:
        return before not in _DETERMINERS
    if not word.endswith("ed") or before in _DETERMINERS:
        return False
    # "the film directed by Jack Hill": a reduced clause's participle, not a verb of its own
    return not (i + 1 < len(words) and words[i + 1] == "by")


def split_main_clause(rel: str, clause: str) -> tuple[str, str] | None:
    """(the relative clause's own part, the main clause) of what follows a subject's relative pronoun, or None
    when no second verb group is found. A "who"/"that" clause opens with its own verb; a "whose"/"whom" clause
    has its subject first ("whose bridge suffered mishaps …"). A clause nested in the relative clause ("… the
    special election that RoseLee Vincent won | left office …") keeps its verb."""
    words = clause.split()
    if not words:
        return None
    # "that the hitman Richard Kuklinski was tied to": an object's clause, its subject first
    starts_with_verb = rel.lower() in {"who", "that", "which"} and words[0].islower() and words[0] not in _DETERMINERS
    own_found = starts_with_verb
    nested = 0
    for i in range(1 if starts_with_verb else 0, len(words)):
        word = words[i].lower()
        if own_found and word in _NESTED and i > 0:
            nested += 1
            continue
        present = _present(words, i, own_found)
        if not (_finite(words, i) or present):
            continue
        if not own_found:
            own_found = True
        elif nested:
            nested -= 1
        elif i >= 2:
            # "who played Marcia also | reprised …": an adverb before the verb is the main clause's
            cut = i - 1 if words[i - 1].lower() in _ADVERBS else i
            return " ".join(words[:cut]), " ".join(words[cut:])
    return None


def subject_clause(before: str, noun_phrase: str, rel: str, clause: str) -> tuple[str, str] | None:
    """A declarative question whose subject carries the relative clause, the question word in its main clause:
    (the subject with its clause, the main clause). What comes before the subject is context it may point back
    to ("Selma Archerd appeared in a 1988 Brady film; the actress in it who played Marcia …"): it stays with it."""
    if before and not before.endswith(";"):
        return None
    split = split_main_clause(rel, clause)
    if split is None or ASKED_IN_CLAUSE.search(split[0]) or not ASKED_IN_CLAUSE.search(split[1]):
        return None
    return f"{before} {noun_phrase} {rel} {split[0]}".strip(), split[1]


def _present(words: list[str], i: int, own_found: bool) -> bool:
    """A present-tense verb in -s: a "whose" clause's right after its subject ("whose lead singer appears"), or
    a main clause's after a preposition or a name ends the relative clause ("… was tied to | keeps close …")."""
    word = words[i]
    if i == 0 or not word.islower() or not word.endswith("s") or word.endswith("ss"):
        return False
    if not own_found:
        return i <= 2
    before = words[i - 1]
    return before.lower() in _PREPOSITIONS or (before[:1].isupper() and i >= 2)


# a statement, then the question about what it describes, pointing back to it ("…; who directed that remake?")
_CONTEXT_FIRST = re.compile(
    r"^(?P<context>[^;?]{20,}?)\s*;\s*(?P<asked>(?:(?:in|on|at|to|for|from|by|under|with)\s+)?"
    r"(?:who|whom|what|which|when|where|how)\b[^;]*\?)$",
    re.I,
)
_POINTS_BACK = re.compile(r"\b(?:it|its|that|this|these|those|he|she|his|her|they|their)\b", re.I)


def context_first(question: str) -> tuple[str, str] | None:
    """(the statement, the question) of "A 1970 sex comedy was made by …; under what title was it released?":
    the question points back to what the statement describes. None for other shapes."""
    found = _CONTEXT_FIRST.match(question)
    if found is None or not _POINTS_BACK.search(found.group("asked")):
        return None
    return found.group("context"), found.group("asked")
