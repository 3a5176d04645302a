"""What a question is about, for the claim check (agent/citations.py) in every mode: the code names it asks
about, and its subject words. A sentence about neither answers another question, however true it is."""

from __future__ import annotations

import math
import re

from kb_agent.agent.context import AgentContext
from kb_agent.agent.coverage import NAMED
from kb_agent.agent.question_terms import key_terms
from kb_agent.agent.shape import question_shape
from kb_agent.retrieval.exact import RARE, code_identifiers
from kb_agent.text.tokenize import tokenize

SUBJECT_SPREAD = 1.0  # a question's subject words: term weights this close to its rarest word's
# a name written as a word: Kubernetes, Gevent, Redis - not CORSMiddleware, OAuth2, max_age
_WORD_NAME = re.compile(r"[A-Z][a-z0-9]+")


def question_anchors(ctx: AgentContext, query: str) -> tuple[list[str], set[str]]:
    """The code names the question is about (`max_age`, a backticked or dotted name, LANG-75, HTTP/3) that few
    chunks hold (at most RARE of them, or one): a name on every page ("FastAPI") frames a question rather than
    being what it asks about. And its subject words: its rarest plain key terms, when that rare."""
    named = code_identifiers(query)
    plain = key_terms(query) - {t for name in named for t in tokenize(name)}
    if ctx.term_weights is None or ctx.kb_chunks is None:
        return named, set()
    terms = {name: set(tokenize(name)) for name in named}
    try:
        weights = ctx.term_weights(set().union(plain, *terms.values()))
        chunks = ctx.kb_chunks()
    except Exception:  # statistics are a refinement: every name counts without them, no plain word
        return named, set()
    rare = _rare_weight(chunks)
    names = [name for name in named if max((weights.get(t, 0.0) for t in terms[name]), default=0.0) >= rare]
    rarest = max((weights.get(t, 0.0) for t in plain), default=0.0)
    # the rarest of them and those nearly as rare (within e-fold of its chunk count): "MongoDB", not "stream"
    return names, {t for t in plain if weights.get(t, 0.0) >= max(rare, rarest - SUBJECT_SPREAD)}


def question_names(ctx: AgentContext, query: str) -> set[str]:
    """The names (analysed) a one-lookup question writes as prose - "Which Kubernetes operator does FastAPI
    Cloud use?" - that few chunks hold (RARE, as for code names) and some chunk the caller may read holds. A
    sentence answers it only from a passage that writes every one of them: "Replication, with autoscaling based
    on requests", from the FastAPI Cloud page, does not say which Kubernetes operator. A name no page writes is
    `vocabulary`'s to judge; without statistics no name is required. Only of a question plainly one lookup
    (`shape`): "Which magazine started first, Guitar World or Science News?" is answered by a sentence on each."""
    if ctx.term_weights is None or ctx.kb_chunks is None or question_shape(query) != "simple":
        return set()
    # a word, not code: code names are the anchors' to require, and a class (`CORSMiddleware`) is written on its
    # page's first chunk, not on the chunk listing its parameters ("`max_age` … Defaults to `600`")
    found = {t for m in NAMED.finditer(query) if _WORD_NAME.fullmatch(m.group()) for t in tokenize(m.group())}
    found &= key_terms(query)
    if not found:
        return set()
    try:
        weights = ctx.term_weights(found)
        chunks = ctx.kb_chunks()
        held = ctx.held_terms(found) if ctx.held_terms is not None else found
    except Exception:  # statistics are a refinement: without them no name is required
        return set()
    return {t for t in found & held if weights.get(t, 0.0) >= _rare_weight(chunks)}


def _rare_weight(chunks: int) -> float:
    """The weight (inverse chunk frequency, engine._term_weights) of a term that RARE of the chunks hold."""
    return math.log(1 + (chunks + 1) / (1 + max(1.0, RARE * chunks))) - 1e-9
