"""The code names a question writes and the passages that name them: a line whose passage never names the code
asked about answers of something else (asked `GzipRequest`'s compression level: GZipMiddleware's
`compresslevel`; asked `HTTPSRedirectMiddleware`'s status code: `RedirectResponse`'s 307)."""

from __future__ import annotations

from dataclasses import dataclass

from kb_agent.agent.evidence_units import terms
from kb_agent.agent.name_kinds import names as named_in
from kb_agent.text.tokenize import tokenize
from kb_agent.tools.base import Evidence


def code_names(question: str, asked: set[str]) -> set[str]:
    """The key terms that are code names the question writes, whole, less acronyms: "HTTP" is no name of one
    thing, and "redirect" (a piece of `HTTPSRedirectMiddleware`) is no name at all; `add_middleware` is the
    question's "app.add_middleware"."""
    wholes = {
        tokens[0] for name in named_in(question, code_only=True) if not name.isupper() and (tokens := tokenize(name))
    }
    return {t for t in asked if t in wholes or any(w in t.split(".") for w in wholes)}


def code_pieces(question: str) -> set[str]:
    """The analysed first word of each code name the question writes ("stream" of `StreamingResponse`): what the
    name is of ("valid" of `AfterValidator` says nothing of it)."""
    return {tokens[1] for name in named_in(question, code_only=True) if len(tokens := tokenize(name)) > 1}


def named_beside(e: Evidence, sources: list[Evidence], contexts: list[dict[str, float]], codes: set[str]) -> set[str]:
    """The code names (of `codes`) a passage of the same page just before or after `e` names - unless `e`'s own
    section is titled by other code (`TrustedHostMiddleware`'s after `HTTPSRedirectMiddleware`'s)."""
    titled = named_in(e.heading_path[-1], code_only=True) if e.heading_path else set()
    if titled and not any(t in codes for name in titled for t in tokenize(name)[:1]):
        return set()
    return {
        t
        for other, c in zip(sources, contexts, strict=True)
        if other.path == e.path and (other.start_line == e.end_line + 1 or e.start_line == other.end_line + 1)
        for t in codes
        if c.get(t) == 1.0
    }


@dataclass
class AskedCode:
    names: set[str]  # the code names the question writes (key terms)
    found: set[str]  # those some passage names, rare enough to be what the question is about
    contexts: list[dict[str, float]]  # each passage's credits, with the names its neighbour on the page gives
    titled_by: list[bool]  # each passage's page is titled by a name's first word ("Stream Data")

    def names_it(self, index: int, held: dict[str, float]) -> bool:
        """Does the line (its credits `held`) or its passage speak of the code asked about?"""
        if not self.found or self.titled_by[index]:
            return True
        return any(self.contexts[index].get(t) == 1.0 or held.get(t) for t in self.found)


def asked_code(
    question: str, asked: set[str], weight: dict[str, float], contexts: list[dict[str, float]], sources: list[Evidence]
) -> AskedCode:
    """The code names asked about and where the passages name them. A name the knowledge base writes everywhere
    (FastAPI in its docs) is too common to count. A page names the code it is about in one passage and goes on
    about it in the next ("It also declares an optional `last_query` cookie" of `query_or_cookie_extractor`, named
    ten lines down): a passage next to one naming it counts as naming it - not one further away ("HTTP 状态码 400"
    at the top of the page on errors is no status code of `UnicornException`'s handler)."""
    rarest = max(weight.values(), default=0.0)
    asked_names = code_names(question, asked)
    found = {t for t in asked_names if weight.get(t, 0.0) >= rarest / 2 and any(c.get(t) == 1.0 for c in contexts)}
    if found:
        contexts = [
            {**c, **dict.fromkeys(named_beside(e, sources, contexts, found), 1.0)}
            for e, c in zip(sources, contexts, strict=True)
        ]
    pieces = code_pieces(question)
    return AskedCode(asked_names, found, contexts, [bool(pieces & terms(e.title)) for e in sources])
