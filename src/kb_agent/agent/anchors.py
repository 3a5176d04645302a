"""What a question is about, for the claim check (agent/citations.py) in every mode: the code names it asks
about, and its subject words. A sentence about neither answers another question, however true it is."""

from __future__ import annotations

import math

from kb_agent.agent.context import AgentContext
from kb_agent.agent.extractive import key_terms
from kb_agent.retrieval.exact import RARE, code_identifiers
from kb_agent.text.tokenize import tokenize

SUBJECT_SPREAD = 1.0  # a question's subject words: term weights this close to its rarest word's


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
    # the weight (inverse chunk frequency, engine._term_weights) of a term that RARE of the chunks hold
    rare = math.log(1 + (chunks + 1) / (1 + max(1.0, RARE * chunks))) - 1e-9
    names = [name for name in named if max((weights.get(t, 0.0) for t in terms[name]), default=0.0) >= rare]
    rarest = max((weights.get(t, 0.0) for t in plain), default=0.0)
    # the rarest of them and those nearly as rare (within e-fold of its chunk count): "MongoDB", not "stream"
    return names, {t for t in plain if weights.get(t, 0.0) >= max(rare, rarest - SUBJECT_SPREAD)}
