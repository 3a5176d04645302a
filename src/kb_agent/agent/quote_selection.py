"""Which of the ranked evidence lines an extractive answer quotes, and with what: twins (the same sentence on
another page, the same number restated) once, a list item as its list, a line with the command it introduces, with
the reason or contrast beside it, with the line it points back to."""

from __future__ import annotations

import re
from collections.abc import Callable

from kb_agent.agent.claim_terms import checkable, code_items
from kb_agent.agent.evidence_following import block_ending, commands_after, list_after, listed_before
from kb_agent.agent.evidence_units import Unit, terms, units_of
from kb_agent.agent.name_kinds import new_names
from kb_agent.agent.question_terms import key_terms
from kb_agent.agent.reasons import (
    antecedent,
    asks_benefit,
    asks_consequence,
    asks_why,
    contrast_after,
    named_by_it,
    passage_subject,
    reason_beside,
    result_after,
    speaker,
    states_consequence,
    states_own_cause,
)
from kb_agent.agent.sentences import Sentence
from kb_agent.text.tokenize import has_cjk
from kb_agent.tools.base import Evidence


def choose(
    question: str, ranked: list[Unit], sources: list[Evidence], max_sentences: int, yes_no: bool = False
) -> list[Sentence]:
    """The best 1-`max_sentences` of the ranked units as quotes, in reading order within each passage and the best
    line's passage first: no twins, a list item as its list, a line with the reason, the contrast or the
    antecedent it needs. `yes_no`: asked yes or no, a line saying much less of the question than the best one is
    left out ("Is data read from the Request validated?" is answered by "… it won't be validated"; "FastAPI is
    validating that data" beside it misleads)."""
    chosen: list[Unit] = []
    asked = key_terms(question)
    replaced: list[Unit] = []
    own_language = has_cjk(question)
    for unit in ranked:
        if chosen and unit.score < 0.8 * ranked[0].score:
            break
        if yes_no and chosen and unit.own < 0.8 * ranked[0].own:
            continue
        if chosen and chosen[0].zh == own_language and unit.zh != own_language and _restated(unit, chosen):
            continue  # answered in the question's language: an English reference page's copy adds nothing
        if any(_twins(unit, other) for other in replaced):
            continue  # a third copy, of the one a better twin replaced
        twin = next((at for at, other in enumerate(chosen) if _twins(unit, other)), None)
        if twin is not None:
            other = chosen[twin]
            if unit.zh == other.zh and (
                _says_more(unit, asked, question) > _says_more(other, asked, question)
                if similar(unit.terms, other.terms)
                else len(asked & terms(unit.heading)) > len(asked & terms(other.heading))
            ):
                # the same sentence twice (another page, another version): the one that says more of the
                # question - "multiple `File` and `Form` parameters" over "multiple `Form` parameters", asked both,
                # and saying as much, the one naming less the question does not (asked only of `Form`), then the
                # one whose headings say more of it (a page's section over the release note that copies it);
                # a number restated in other words (the same note on the cookie and the query model pages): the
                # one whose headings say more of what is asked
                replaced.append(other)
                chosen[twin] = unit
            continue
        if any(_quoted_within(unit, other) for other in chosen):
            continue  # `ItemsService.createItemItemsPost(…)`, already quoted as the example a chosen line shows
        if len(chosen) >= max_sentences:
            break
        chosen.append(unit)
    if chosen:
        top, beside = _reasoned(question, chosen, sources)
        if beside is not None and not _same(beside, top):  # second, even when ranked lower among the chosen
            rest = [u for u in chosen if not _same(u, top) and not _same(u, beside)]
            chosen = [top, beside, *rest][: max(max_sentences, 2)]  # a line and the one it needs come together
    limit = max(max_sentences, len(chosen))  # a line and its reason may exceed it
    chosen = _with_titles(_once(_with_antecedents(_as_lists(chosen, sources), sources, limit, ranked, asked, yes_no)))
    if ASKS_PERSON.search(question):
        chosen = _with_whose(chosen, sources)
    elif ASKS_NAMED_THING.search(question):
        chosen = _with_its_name(question, chosen, sources)
    # back in reading order within each passage, the passage of the best line first: "To declare a request body,
    # you use Pydantic models" opens the answer to "How do I declare a request body?", wherever its page was found
    first: dict[int, int] = {}
    for at, unit in enumerate(chosen):
        first.setdefault(unit.source, at)
    chosen.sort(key=lambda u: (first[u.source], u.line, u.position))  # a heading (position < 0) above its line
    return [Sentence(text, [u.source + 1], joins_next=u.pointed_to) for u, text in _listed_once(chosen, sources)]


def _listed_once(chosen: list[Unit], sources: list[Evidence]) -> list[tuple[Unit, str]]:
    """Each line as quoted, a list once: "你不仅可以声明 `str`，还可以声明所有标准的 Python 类型。" quoted with the list
    its "例如：" introduces leaves "例如：" nothing to add, and a line saying more is quoted without it again."""
    shown: set[tuple[int, str]] = set()
    quoted: list[tuple[Unit, str]] = []
    for unit in chosen:
        listed = list_after(unit, sources[unit.source])
        items = {(unit.source, item) for item in listed}
        if items and items <= shown:
            if not unit.text.rstrip().endswith((":", "：")):
                quoted.append((unit, unit.text))
            continue
        shown |= items
        quoted.append((unit, _with_list(unit, sources[unit.source], listed)))
    return quoted


# about a person: "Who is …?", "Which actress …?", "… the linebacker who held …" (a "He …" line's subject is
# worth a line whoever is asked)
ASKS_PERSON = re.compile(
    r"\b(?:who|whom|whose)\b|\bwhich\s+(?:[\w-]+\s+){0,2}?(?:actress|actor|man|woman|person|player|singer|author|writer|"
    r"director|coach|executive|politician|lawmaker|musician|composer|producer|drummer|guitarist|songwriter)\b"
    r"|谁",
    re.I,
)


def _restated(unit: Unit, chosen: list[Unit]) -> bool:
    """Does a line in the other language write only code the chosen lines write? Then it is their copy ("To stream
    Server-Sent Events, … `response_class=EventSourceResponse`" after the Chinese line saying so); one writing
    more ("`fastapi run` currently leaves `FASTAPI_ENV` unchanged") adds it, and one writing none is not judged."""
    items = code_items(unit.text)
    said = set().union(*(code_items(other.text) for other in chosen if other.zh != unit.zh))
    return bool(items) and items <= said


def _with_whose(chosen: list[Unit], sources: list[Evidence]) -> list[Unit]:
    """Asked about a person, a line of an encyclopedia's record that opens "He …" / "She …" comes with the record's
    opening line, which names the person ("Bob Nielson (born …) is an American football coach." / "He is the current head
    coach at …"), and a line an author writes as "I …" with the one saying who "I" is; beside the lines chosen: it
    takes no chosen line's place."""

    def whose(unit: Unit, units: list[Unit]) -> Unit | None:
        return (passage_subject(unit, units) or speaker(unit, units)) if unit.position > 0 else None

    return _with_lines_naming(chosen, sources, whose)


def _with_lines_naming(
    chosen: list[Unit], sources: list[Evidence], naming: Callable[[Unit, list[Unit]], Unit | None]
) -> list[Unit]:
    """Each chosen line preceded by the line of its passage that says whom or what it speaks of (`naming`, given
    the line and its passage's units), once, and only for its sake."""
    kept: list[Unit] = []
    passages: dict[int, list[Unit]] = {}  # a passage's units, read once
    for unit in chosen:
        if unit.source not in passages:
            passages[unit.source] = units_of(unit.source, sources[unit.source])
        named = naming(unit, passages[unit.source])
        if named is not None and not any(_same(named, other) for other in [*kept, *chosen]):
            named.pointed_to = True
            kept.append(named)
        kept.append(unit)
    return kept


# asked which project, library, tool … does something: a name answers, and a line saying "It provides …" names none
ASKS_NAMED_THING = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:project|library|tool|company|organi[sz]ation|framework|package|"
    r"service|product|foundation|vendor)s?\b|(?:哪个|哪家|哪一个|什么)(?:项目|库|工具|公司|组织|框架|包|服务|产品|基金会)",
    re.I,
)
_OPENS_WITH_IT = re.compile(r"^(?:it|它)(?:\b|(?=[\u4e00-\u9fff]))", re.I)
NAME_REACH = 3  # lines back, within the section, where the name an "It …" line speaks of may be


def _with_its_name(question: str, chosen: list[Unit], sources: list[Evidence]) -> list[Unit]:
    """Asked which project (library, tool …) does something, a chosen line that opens "It …" and names nothing
    the question does not comes with the nearest line before it, in its section, that does: "It provides HTTPS
    certificates for free" answers "Which project …?" only beside "But then Let's Encrypt was created." """

    def its_name(unit: Unit, units: list[Unit]) -> Unit | None:
        if unit.position <= 0 or not _OPENS_WITH_IT.match(unit.text) or new_names(unit.text, question):
            return None
        earlier = [u for u in units[max(0, unit.position - NAME_REACH) : unit.position] if u.heading == unit.heading]
        return next((u for u in reversed(earlier) if new_names(u.text, question) or _says_heading(u)), None)

    return _with_lines_naming(chosen, sources, its_name)


def _says_heading(unit: Unit) -> bool:
    """The line writes a capitalised word of its section's headings past its first word ("But then **[Let's
    Encrypt](…)** was created." under "About HTTPS › Let's Encrypt"): the name a later "It …" there speaks of."""
    plain = re.sub(r"[*_`\[\]]", "", re.sub(r"\]\([^)]*\)", "]", unit.text))
    capitalised = set(re.findall(r"(?<=\s)[A-Z][\w'’-]+", plain))
    return bool(unit.heading) and any(
        re.search(rf"(?<![\w'’]){re.escape(w)}(?![\w'’])", unit.heading) for w in capitalised
    )


def _with_titles(chosen: list[Unit]) -> list[Unit]:
    """A line whose heading states what was asked ("0.129.0 (2026-02-12)" above "➖ Drop support for Python
    3.9") quoted with that heading, once: alone it does not say it."""
    kept: list[Unit] = []
    for unit in chosen:
        title = unit.titled
        # (two passages of one page give the same heading twice: "0.69.0 (2021-10-07)" quoted once)
        if title is not None and not any(_same(title, other) or title.text == other.text for other in kept):
            title.pointed_to = True
            kept.append(title)
        kept.append(unit)
    return kept


def _reasoned(question: str, chosen: list[Unit], sources: list[Evidence]) -> tuple[Unit, Unit | None]:
    """The line to quote first and the one it needs beside it. Asked why (or what it gains), the best line
    restates the question and its reason is beside it - or beside the next chosen line, when the best one has
    none: "Here, the `shutdown` event handler … writes … `log.txt`" has no reason; "So, we declare the event
    handler … with standard `def`" has it before it ("But `open()` doesn't use `async` and `await`"). A line
    giving its reason itself needs none. Else a line saying what a thing is not goes on with what it is."""
    passages: dict[int, list[Unit]] = {}
    if asks_why(question) or asks_benefit(question):
        for unit in chosen:
            if states_own_cause(unit.text):
                return unit, None  # it says its reason itself ("… so that your editor doesn't mark errors")
            units = passages.setdefault(unit.source, units_of(unit.source, sources[unit.source]))
            if (reason := reason_beside(unit, units)) is not None:
                return unit, reason
    if asks_consequence(question):
        for unit in chosen:
            if states_consequence(unit.text):
                return unit, None  # "If …, they will receive an error"
            units = passages.setdefault(unit.source, units_of(unit.source, sources[unit.source]))
            if (result := result_after(unit, units)) is not None:
                return unit, result
    top = chosen[0]
    return top, contrast_after(top, passages.get(top.source) or units_of(top.source, sources[top.source]))


def _as_lists(chosen: list[Unit], sources: list[Evidence]) -> list[Unit]:
    """A list item chosen is quoted as its list, with the line that introduces it ("**Swagger UI** uses the
    files:" / `swagger-ui-bundle.js` / `swagger-ui.css`), once for all its items: an item alone does not say
    what it is one of. A list too long to quote leaves its items as they are."""
    kept: list[Unit] = []
    for unit in chosen:
        lead = unit.intro
        if lead is not None and list_after(lead, sources[unit.source]):
            lead.score, lead.own, lead.coverage = unit.score, unit.own, unit.coverage
            unit = lead
        if not any(_same(unit, other) for other in kept):
            kept.append(unit)
    return kept


def _with_list(unit: Unit, evidence: Evidence, listed: list[str] | None = None) -> str:
    """A line that introduces a list ("… can come from:") or a command ("… use the command:") quoted with it, as
    a list: alone it says only that there is one. `listed`: its list, when already read."""
    items = (list_after(unit, evidence) if listed is None else listed) or commands_after(unit, evidence)
    if not items and (ending := block_ending(unit, evidence)):  # "… to the local API at" + the URL block
        return " ".join([unit.text, *(f"`{line}`" for line in ending)])
    tail = [unit.tail] if items and unit.tail else []  # "When using any of:" / the list / "you can also …"
    return "\n".join([unit.text, *(f"- {item}" for item in items), *tail])


def _with_antecedents(
    chosen: list[Unit], sources: list[Evidence], limit: int, ranked: list[Unit], asked: set[str], yes_no: bool
) -> list[Unit]:
    """The best line, when it opens by pointing back ("That tells the browser …"), with the line it points to, and
    when it opens "It …" (unless asked yes or no), with the line naming "it"; a lesser one only when that line
    matches the question too or completes it (`completes`), else not at all. Within `limit` lines (the best one's
    pair may exceed it), a line and its antecedent come in together or not at all."""
    kept: list[Unit] = []
    passages: dict[int, list[Unit]] = {}  # a passage's units, read once
    for at, unit in enumerate(chosen):
        if unit.source not in passages:
            passages[unit.source] = units_of(unit.source, sources[unit.source])
        before = antecedent(unit, passages[unit.source])
        if before is None and (listed := listed_before(unit, passages[unit.source], sources[unit.source])):
            before = listed[0]  # "They work the same way …": with the list it names
        if before is None and at == 0 and not yes_no:  # the best line opening "It …": with the line naming "it"
            # (asked yes or no, the line saying the answer stands alone: "FastAPI is validating the data …" before
            # "It would also mean that … it won't be validated" misleads)
            before = named_by_it(unit, passages[unit.source])
        if before is not None and (copy := _copy_beside(unit, before, [*kept, *chosen], passages, sources)):
            unit, before = copy
        # "That tells the browser …" without what "that" is says half of it: not quoted, unless the line it points
        # to says what the question asks of and it does not: the two answer together ("In your top-level
        # application, `app`, mount the sub-application" / "In this case, it will be mounted at the path `/subapi`")
        if (
            before is not None
            and at > 0
            and not any(_same(before, other) for other in ranked)
            and not completes(before, unit, asked, chosen[0])
        ):
            continue
        group = [unit] if before is None or any(_same(before, other) for other in [*kept, *chosen]) else [before, unit]
        first = antecedent(before, passages[unit.source]) if before is not None and len(group) == 2 else None
        if first is not None and not any(_same(first, other) for other in [*kept, *chosen]):
            group = [first, *group]  # "This parameter contains …" points back in turn: to the `tokenUrl` line
        for pointed in group[:-1]:
            pointed.pointed_to = True  # quoted for `unit`'s sake: kept only with it
        fits = len(kept) + len(group) <= limit or not kept  # the best line is never dropped for its antecedent
        if fits and not any(_same(unit, other) for other in kept):
            kept.extend(group)
    return kept


# a line giving the reason for the one before it, or what follows from it, speaks of that line's statement, not of a
# thing it names: "Because the software … sends a request …" after the line defining a callback
_EXPLAINS_BEFORE = re.compile(r"^(?:because|as a result|因为|由于|因此|所以)", re.I)


def completes(before: Unit, unit: Unit, asked: set[str], best: Unit) -> bool:
    """Does the line `unit` points back to say a term of the question (`asked`) that `unit` does not, `unit` taking
    its subject from it ("In this case, it will be mounted …"), so that the two say as much of the question as the
    `best` line does? A pair saying less only crowds the best line ("**FastAPI** has some default exception
    handlers." / "These handlers are in charge of …" over "When a request contains invalid data, **FastAPI**
    internally raises …")."""
    own = unit.terms & asked
    if _EXPLAINS_BEFORE.match(unit.text) or not own or not (before.terms - unit.terms) & asked:
        return False
    return len((before.terms | unit.terms) & asked) >= len(best.terms & asked)


def _copy_beside(
    unit: Unit, before: Unit, chosen: list[Unit], passages: dict[int, list[Unit]], sources: list[Evidence]
) -> tuple[Unit, Unit] | None:
    """When the line `unit` points back to is the twin of one chosen from another page (two pages share a
    note and its follow-up: "…不能同时声明…`Body` 字段…" / "这不是 **FastAPI** 的限制…"), the follow-up on the
    chosen page, with the chosen line: the answer reads on one page. None when there is no such copy."""
    for other in chosen:
        if other.source == unit.source or not _twins(before, other):
            continue
        units = passages.setdefault(other.source, units_of(other.source, sources[other.source]))
        at = other.position + unit.position - before.position
        if 0 <= at < len(units) and _twins(units[at], unit):
            return units[at], other
    return None


def _once(chosen: list[Unit]) -> list[Unit]:
    """Each sentence once: a line an antecedent chain brought in may be the twin of one already chosen (a
    release note copies the page's paragraph); the copy that another line points back to stays."""
    kept: list[Unit] = []
    for unit in chosen:
        twin = next((at for at, other in enumerate(kept) if _twins(unit, other)), None)
        if twin is None:
            kept.append(unit)
        elif unit.pointed_to and not kept[twin].pointed_to:
            kept[twin] = unit
    return kept


def _quoted_within(unit: Unit, other: Unit) -> bool:
    """Does a chosen line already quote this one whole (the example it shows after "…"; "代码库 100% 类型标注" inside
    "代码库100% 类型标注 (Python 类型注解，…)"), spaces aside?"""
    text = re.sub(r"\s+", "", unit.text.strip(" `"))
    return len(text) >= 10 and text in re.sub(r"\s+", "", other.text)


def _same(a: Unit, b: Unit) -> bool:
    return (a.source, a.position) == (b.source, b.position)


def similar(a: set[str], b: set[str], share: float = 0.7) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= share


def _says_more(unit: Unit, asked: set[str], question: str) -> tuple[float, int, int]:
    """How a line ranks among its twins: what it says of the question, less the names it gives unasked, and
    what its headings say of the question."""
    return unit.own, -_unasked(unit, question), len(asked & terms(unit.heading))


def _unasked(unit: Unit, question: str) -> int:
    """How many code names the line gives that the question does not."""
    return len(new_names(unit.text, question))


RESTATED = 0.5  # share of words two lines giving the same number must have to say one fact


def _twins(a: Unit, b: Unit) -> bool:
    """The same sentence twice, or the same number restated in other words on another page: "自 FastAPI 版本
    `0.115.0` 起支持此功能" and "FastAPI 从 `0.115.0` 版本开始支持这个特性" (the cookie and the query model pages)."""
    if similar(a.terms, b.terms):
        return True
    items = checkable(a.text)
    return (
        any(c.isdigit() for c in "".join(items)) and items == checkable(b.text) and similar(a.terms, b.terms, RESTATED)
    )
