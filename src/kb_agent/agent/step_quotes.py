"""The lines an extractive answer quotes, for one lookup and for the last step of a multi-step question: the
question's best lines, or the line naming the bridge and then what the last step asks of it."""

from __future__ import annotations

from dataclasses import replace

from kb_agent.agent.extractive import Embed, extractive_sentences
from kb_agent.agent.final_step import FinalStep, relation_line
from kb_agent.agent.question_terms import Weights, key_terms
from kb_agent.agent.sentences import Sentence
from kb_agent.tools.base import Evidence


def step_quotes(
    query: str, final: FinalStep | None, sources: list[Evidence], embed: Embed | None, weights: Weights | None
) -> list[Sentence]:
    """The evidence sentences that answer. A question whose steps a rule read: the best sentence for the
    question itself (it names the bridge: "Blue Velvet was shot in Leland in 1986"), then the best two for the
    last step, which holds the answer ("Blue Velvet was directed by David Lynch"). Otherwise the question's
    best 1-3, and only when none covers it, the last step's (a guessed bridge is a weaker reading)."""
    if final is None or not final.ruled:
        own = extractive_sentences(query, sources, embed, weights=weights)
        if own or final is None:
            return own
        return extractive_sentences(final.query, sources, embed, max_sentences=2, weights=weights)
    chain = extractive_sentences(query, sources, embed, max_sentences=1, weights=weights)
    about = [n for n, e in enumerate(sources, start=1) if final.names_bridge(e.text)]  # numbers in `sources`
    # the bridge's own page first: "It was directed by Neal Israel" on the sequel's page is not about it
    about = [n for n in about if final.opens(sources[n - 1].text)] or about
    passages = [sources[n - 1] for n in about]

    def numbered(lines: list[Sentence]) -> list[Sentence]:  # lines of `passages`, cited as in `sources`
        return [replace(line, cited=[about[i - 1] for i in line.cited]) for line in lines]

    relation = final.relation()
    said: list[Sentence] = []  # what the last step's lines say of the bridge
    if about and relation:  # the relation's line in the bridge's passages
        said = numbered(extractive_sentences(relation, passages, embed, max_sentences=1, weights=weights))
    step = extractive_sentences(final.query, sources, embed, max_sentences=2, weights=weights)
    # a line saying only the bridge's name ("… the Chesapeake Bay Retriever in 1964", asked its nickname) answers
    # no part of what the step asks of it
    of_relation = key_terms(relation)
    said += [line for line in step if not of_relation or not final.only_names_bridge(line.text, of_relation)]
    if not said and about:  # no line says the step's words: the bridge's own line closest to what is asked
        said = numbered(relation_line(final, passages, embed))
    return _first_lines(list({(s.text, tuple(s.cited)): s for s in chain + said}.values()), 3)


def _first_lines(lines: list[Sentence], limit: int) -> list[Sentence]:
    """The first `limit` lines, each with the line quoted for its sake before it (a record's opening line naming
    the "He" of the next): that one takes no place of its own."""
    kept: list[Sentence] = []
    own = 0
    for line in lines:
        if own == limit:
            break
        kept.append(line)
        own += not line.joins_next
    while kept and kept[-1].joins_next:  # a line quoted for a line left out goes too
        kept.pop()
    return kept
