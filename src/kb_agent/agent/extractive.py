"""The answer without a generative model: the evidence sentences that best cover the question, each cited
to its own lines. Also the coverage test that refuses an unanswerable question before any model call.

Units are the lines of the evidence that can answer (agent/evidence_units.py). They are ranked by how many of
the question's key terms they hold, then by the embedder's similarity (when one is at hand) and by language,
and by what the question's shape asks for (a way, a definition, a name, a version …)."""

from __future__ import annotations

import re
from collections.abc import Callable

from kb_agent.agent import answer_types, asked_shapes, reasons, section_titles
from kb_agent.agent.asked_code import asked_code
from kb_agent.agent.asked_means import QUOTED_CODE, asks_means, new_code, offers_means
from kb_agent.agent.claim_terms import NEGATES, OWNER_LINES, names_word, port_owner, version_owner
from kb_agent.agent.definitions import asks_name, defines, gives_name
from kb_agent.agent.evidence_following import (
    code_after,
    commands_after,
    introduces_example,
    list_after,
    listed_before,
)
from kb_agent.agent.evidence_units import EXAMPLE_GAP, LINK_TARGET, Unit, terms, units_of
from kb_agent.agent.example_lines import ASKS_OUTPUT, KEY_KINDS, answering_line, output_example
from kb_agent.agent.name_kinds import (
    CALL_WORDS,
    CALLABLE_KINDS,
    COMMAND_KINDS,
    PRODUCT_KINDS,
    asked_kind,
    console_line,
    free_kind,
    instances_of,
    keys_kind,
    kind_qualifier,
    lists_instances,
    new_names,
    points_to_kind,
    products,
    says_kind,
)
from kb_agent.agent.name_kinds import (
    names as named_in,
)
from kb_agent.agent.other_language import ECHOED, UNTRANSLATED, echoed, translated, written_as_code
from kb_agent.agent.question_terms import (
    ASKS_DIFFERENCE,
    KIND_OF,
    QUESTION_TERMS,
    Weights,
    comparable_terms,
    excluded_capped,
    key_terms,
    page_named,
    paraphrase_capped,
    rarity,
    says_superlative,
    subject_names,
    superlatives,
    term_credits,
)
from kb_agent.agent.quote_selection import choose
from kb_agent.agent.reasons import (
    antecedent,
    asks_benefit,
    asks_consequence,
    asks_risk,
    asks_why,
    gives_cause,
    named_by_it,
    passage_subject,
    states_consequence,
    states_risk,
    under_why_heading,
)
from kb_agent.agent.rules import TICKET_RE
from kb_agent.agent.sentences import Sentence
from kb_agent.retrieval.exact import versioned_names
from kb_agent.text.tokenize import (
    has_cjk,
    tokenize,
)
from kb_agent.tools.base import Evidence

PLACE_BONUS = 0.1  # asked where a thing goes, a line saying where something goes ranks above one about the thing
OUTPUT_BONUS = 0.1  # asked what comes back, the line announcing the response shown ranks above as well covered ones
NAME_BONUS = 0.3  # asked "which class / header ...", a line that names one outranks those that do not
KEYED_BONUS = 0.2  # ... and a line setting a key of that kind (`"type": …`) outranks prose that names others
POINTED_TO = 1.0  # credit for a key term said by the line a line opening "This …" points back to
IT_NAMED = 0.5  # credit for a key term said by the line naming the "it" a line opens with
HEADING = 1.0  # credit for a key term said by the headings a line sits under rather than by the line
SHOWN = 0.5  # credit for a key term said by the short example that breaks a sentence in two
UNREADABLE = 0.75  # credit for a key term in the other script than the line's (a Chinese word, an English line)
SAID = 0.2  # among lines a heading covers alike, the one that says the terms itself comes first
REASON_BONUS = 0.3  # asked "why …", a line in a section titled "Why …" outranks one that only restates it
NEGATION_BONUS = 0.1  # asked what must not be, of lines covering the question alike the one that negates comes first
MEANS_BONUS = 0.3  # asked "how can I …", a line that offers a way ("you can …", "use …") outranks a history of it
COVERAGE = 0.5  # share of the question's key terms a unit must hold to be an answer
# share of them the best line must say itself for a quote to be the answer before the local model is asked: half.
# Over the 48 and dev8 sets, answering by the quote wherever one qualified beat the 1.5B model's answers (60 of 68
# right against 56 with the model alone; 57 at 0.9, 58 at 0.75); on all eight sets the extractive answers had
# contained the gold as often as the model's or more (docs/benchmarks.md, stop 32)
QUOTE_OWN = 0.5

Embed = Callable[[str, list[str]], list[float]]  # (question, texts) -> cosine similarities

# a change-log entry: a line that ends by naming its pull request ("… PR [#9647](…) by [@tiangolo](…).")
# asked what must not be ("What must a scope string not contain?", "…不能包含什么？"), not why something is not
# ("为什么不能…？") nor what to do where something does not happen ("X does not trigger …: what should I use?")
_ASKS_FORBIDDEN = re.compile(
    r"^\s*(?:what|which)\b[^?]*\b(?:must|should|may|can)\b[^?]*\bnot\b|^\s*(?:what|which)\b[^?]*\b(?:mustn't|"
    r"shouldn't|cannot|can't)\b|(?:不能|不应该?|不可以?|不得|禁止)[^，。？?]*(?:什么|哪些|哪个)",
    re.I,
)
# "… when no response model is declared?", "… instead of JSON?": the question sets something aside itself, and the
# line saying so ("If you don't declare a response model, …", "… as YAML, not JSON") answers it (没有 is in NEGATES)
_SETS_ASIDE = re.compile(
    r"\b(?:no|without|instead of|rather than|other than|except)\b|而不是|而非|代替|除了|不用", re.I
)
_CHANGELOG_ENTRY = re.compile(r"\bPR \[#\d+\]\([^)]*\)(?: by \[@[\w-]+\]\([^)]*\))?\.?\s*$")
# what a change-log entry can answer: when, in which version or release, something was added, changed or ended
_ASKS_HISTORY = re.compile(
    r"\bversions?\b|\brelease|\bwhen\b|\bsince\b|\bchangelog\b|\b(?:add|remov|drop|deprecat|chang|fix|introduc)\w*"
    r"|版本|发布|何时|什么时候|新增|添加|移除|弃用|更新日志",
    re.I,
)

# "How do I disable syntax highlighting?" is not answered by "You can disable syntax highlighting" (it restates
# the question) but by the line that names the means: "by setting `syntaxHighlight` to `False`:"
RESTATES = 0.4
_MEANS_WORDS = frozenset(tokenize("can could use using 可以 使用"))
_DISCOURSE = frozenset(tokenize("example instance also just then so well actually 比如 例如 同样 当然 首先 然后"))
# asked a status code, a line giving one ("The client will get a **500 Internal Server Error**") says these words
_STATUS_WORDS = frozenset(terms("status code 状态码"))
# a yes/no question is answered by restating it ("Can I …?" - "You can …")
_YES_NO = re.compile(
    r"^\s*(?:is|are|can|could|does|do|did|should|will|would|was|were|has|have|may|must)\b|吗\s*[？?]?\s*$|是否|能不能|可不可以",
    re.I,
)
_ASKS_WHICH = re.compile(
    r"^\s*which\s+(?!(?:is|was|does|has)\b)(?:\w+\s+){0,2}\w+s\b|哪些|哪几", re.I
)  # asks for instances of a kind
# "What is a callback?": the line that defines the word ("… is named a "callback"", "A callback is a …")
DEFINES_BONUS = 0.3
_ASKS_WHAT_IS = re.compile(
    r"^\s*what(?:'s|\s+is|\s+are)\s|是什么[？?]?\s*$|什么是|^\s*what (?:does|do) [^?]{1,60}? mean\s*\??\s*$|是什么意思",
    re.I,
)
_RATHER = re.compile(r"\binstead of\b|\brather than\b|而不是|而非", re.I)
_ASKS_THING = re.compile(r"^\s*(?:what|which)\b|什么|哪个|哪些", re.I)  # not why, how or whether


def without_changelog(text: str, question: str) -> str:
    """The text less its change-log entries ("* 📝 Add External Link: … OpenTelemetry … PR [#9440] …"), unless
    the question asks about history: such an entry answers no how-to question, nor holds its names."""
    if _ASKS_HISTORY.search(question):
        return text
    return "\n".join(line for line in text.split("\n") if not _CHANGELOG_ENTRY.search(line))


def rank(
    question: str, sources: list[Evidence], embed: Embed | None = None, weights: Weights | None = None
) -> list[Unit]:
    """Units holding at least COVERAGE of the question's key terms, weighted by rarity (terms only in the
    unit's passage, title or path count half; the unit itself must hold a third), best first. A unit in the
    other language than the question is judged on the terms it could share with it (identifiers, numbers)."""
    asked = key_terms(question)
    if not asked:
        return []
    weights = remembered(weights)  # the key terms' weights are read once, for their rarity and for the subject
    # a named ticket or versioned name (HTTP/3: "HTTP" and "3" are written everywhere) must be in what we quote
    anchors = {key.upper() for key in [*TICKET_RE.findall(question), *versioned_names(question)]}
    zh = has_cjk(question)
    kind = asked_kind(question)
    kind_terms = asked & set(tokenize(kind)) if kind else set()
    if kind in CALLABLE_KINDS:  # "Which method do you call …?": a line naming a method says it is called
        kind_terms |= asked & CALL_WORDS
    plural = kind is not None and bool(re.search(rf"\b(?:{kind}(?:s|es)|{kind[:-1]}ies)\b|哪些", question, re.I))
    types = answer_types.asked_types(question)
    # asked a version or a date, the releases the question names are what it asks of: "… Python 3.5 dropped?" is
    # not answered by a note dropping Python 3.6 (asked an operator "in Python 3.10+", the line need not say 3.10)
    versions = answer_types.named_versions(question) if set(types) & answer_types.TITLED else frozenset()
    # asked the version of a name ("Which minimum version of uv …?"): a version of something else is no answer
    owner = version_owner(question) if 0 in types else None
    # asked the port of a name ("Which port does the Traefik container listen on?"): the app's `--port 80` is not it
    # (said by the line or its headings: a comment below `--port 80` naming Traefik as a proxy is not enough)
    port_of = port_owner(question) if 1 in types else None
    # asked a maximum size, a line giving a maximum time tells the limit of something else (`max_age`)
    limit = answer_types.limit_of(question)
    means = asks_means(question)
    asks_history = bool(_ASKS_HISTORY.search(question))
    yes_no, why, risk = bool(_YES_NO.search(question)), asks_why(question), asks_risk(question)
    negated = bool(_ASKS_FORBIDDEN.search(question))  # asked what must not be: a line saying so answers
    advice = reasons.advice_asked(question) if why else None  # "Why should you re-raise …?"
    # "Why should … be validated … instead of being used as a dict?": what could go wrong the other way is the reason
    rather = why and bool(_RATHER.search(question))
    follows = asks_consequence(question) and not yes_no  # "Does adding type hints change what happens …?" is yes/no
    what_is = bool(_ASKS_WHAT_IS.search(question) or KIND_OF.search(question))
    named_for = asks_name(question)
    asks_which, lowered = bool(_ASKS_WHICH.search(question)), question.lower()
    asks_one = bool(asked_shapes.ASKS_WHICH_ONE.search(question))
    # asked which thing is, a line saying what is not answers less (a reason or a consequence may deny: "… you don't
    # want …"; asked how, the way may be not to: "…但不声明默认值")
    affirmed = bool(kind or asks_one or what_is) and not (
        yes_no
        or why
        or follows
        or means
        or NEGATES.search(question)
        or _SETS_ASIDE.search(question)
        or asks_benefit(question)
    )
    where = bool(asked_shapes.ASKS_WHERE.search(question))
    place = bool(asked_shapes.ASKS_PLACE.search(question))
    asks_output = bool(ASKS_OUTPUT.search(question))  # "What response do I get …?": the example shown answers
    prose_kind = asked_shapes.prose_kind(question)
    when_to = asked_shapes.when_to(question)
    required_form = asked_shapes.asks_required_form(question)
    differs = bool(ASKS_DIFFERENCE.search(question))
    instances = instances_of(question)
    asked_words = terms(question) | QUESTION_TERMS | _DISCOURSE
    # asked what something defaults to, a line that never says "default" tells some other value of it
    default = answer_types.asks_default(question) and not (yes_no or why or means)
    default_of = answer_types.default_of(question) if default else None
    # the code names the question writes (APIKeyHeader): a line introducing a block that lists them is about them
    code_asked = {t for name in named_in(question, code_only=True) for t in tokenize(name)} & asked
    per_source = [units_of(index, e) for index, e in enumerate(sources)]
    all_units = [(index, unit) for index, units in enumerate(per_source) for unit in units]
    source_lines = [e.text.split("\n") for e in sources]  # the whole line each unit was cut from
    weight = excluded_capped(rarity(asked, [u for _, u in all_units], weights), question)
    # the names of the kind asked for that each line gives and the question does not, read once
    named_by = [new_names(LINK_TARGET.sub("]", u.text), question, kind) if kind else set() for _, u in all_units]
    everywhere = subject_names(set().union(*named_by), weights)
    # the knowledge base's subject ("FastAPI") is shared by every line: no name a line in the other language shares
    # (a word, not an identifier: in a one-page knowledge base `max_age` is written everywhere too)
    subject = subject_names({t for t in asked if t.isascii() and t.isalpha()}, weights)
    # "the name of the cookie …": where a line names one beside the word, a line naming none names something else
    named_only = free_kind(kind) and any(named_by)
    # "哪种流程最安全？": where a line writes the superlative ("最安全的是代码流"), one that does not picks out nothing
    superlative = superlatives(question)
    superlative = superlative if any(says_superlative(u.text, superlative) for _, u in all_units) else []
    if owner in {n.lower() for n in everywhere}:
        owner = None  # the knowledge base's own subject ("FastAPI" in its docs): every line is about it
    # a line speaks within its passage: the passage's words (and its page's title and path) count half
    contexts = [term_credits(terms(f"{e.title} {e.path} {e.text}"), f"{e.title} {e.text}", asked) for e in sources]
    code = asked_code(question, asked, weight, contexts, sources)
    contexts = code.contexts
    weight = paraphrase_capped(weight, contexts, question)
    # the lines of a section share its headings: each heading path is read once
    under = {h: term_credits(terms(h), h, asked) for h in {u.heading for _, u in all_units if u.heading}}
    on_page = page_named(question) & asked
    # "Which algorithm does the settings page recommend …?": where the page named is among the passages, a line of
    # another page answers for some other page
    named_pages = {i for i, e in enumerate(sources) if on_page and on_page <= terms(f"{e.title} {e.path}")}
    maker = asked_shapes.maker_verb(question) & asked
    # the narrowing name counts when it is the rarest term, rarer than any other: HTTP in "Which HTTP methods …"
    # goes without saying
    qualifier = {
        t for t in kind_qualifier(question) & asked if all(weight.get(t, 0.0) > w for o, w in weight.items() if o != t)
    }
    said_in_own = set().union(*(u.terms for _, u in all_units if u.zh == zh)) & asked  # the question's language
    # "哪个版本": a version number answers, not an English line saying "version" ("… the latest version …" outranked
    # the release note under "0.125.0" that dropped Python 3.8)
    type_words = (
        {t for t in asked if t.startswith(answer_types.VERSION_WORD_ZH)} if answer_types.VERSION in types else set()
    )
    if answer_types.STATUS in types:
        type_words |= asked & _STATUS_WORDS
    found: list[Unit] = []
    for (index, unit), names in zip(all_units, named_by, strict=True):
        unit_zh = unit.zh
        comparable = comparable_terms(asked, zh, unit_zh)
        # a Chinese question's words an English line can be read for: those the KB's lexicon translates
        read = (
            translated(asked - comparable - type_words, unit.terms, sources[index], unit.text, weights)
            if zh and not unit_zh
            else written_as_code(asked - unit.terms, unit.text, sources[index])
            if zh
            else {}
        )
        comparable = comparable | set(read)
        if not comparable or (anchors and not any(a in unit.text.upper() for a in anchors)):
            continue
        listed = list_after(unit, sources[index])
        if listed and kind:  # "In this case, you have:" names what its items name
            names = names | new_names(LINK_TARGET.sub("]", ", ".join(listed)), question, kind)
        # "… For example:" / `"servers": [`: the example's line gives what its introduction announces
        # (only when the line gives nothing of what is asked itself: "You can import them from `fastapi.security`:")
        # (a key is set in the example, whatever names the line gives: "… this API `server` … UI …")
        states = answer_types.states_each(types, unit.text, question)
        lacks = (kind is not None and (not names or kind in KEY_KINDS)) or not states
        shown = answering_line(unit, sources[index], question, kind, types) if lacks else ""
        # asked what comes back: "The response would be like:" quoted with the response it shows
        output = output_example(unit, sources[index]) if asks_output and not shown else ""
        if shown:  # read once more with the example's line beside it
            states = answer_types.states_each(types, f"{unit.text} {shown}", question)
        unit.titled = None if states else section_titles.titled(unit, types, question)
        if not (states or unit.titled):
            continue  # asked for a version / a number / an address, and this line has none
        if versions and not all(section_titles.holds_version(unit, v, question) for v in versions):
            continue  # asked of Python 3.5, a note dropping Python 3.6
        if named_only and not (names or shown):
            continue
        if superlative and not says_superlative(unit.text, superlative):
            continue
        if owner and not _names_near(owner, unit, source_lines[index], sources[index]):
            continue  # FastAPI's `0.112.0` pinned, asked uv's minimum version
        if named_pages and index not in named_pages:
            continue
        if not asks_history and _CHANGELOG_ENTRY.search(_line_of(source_lines[index], unit)):
            continue  # "👷 Add custom tokens … to avoid rate limits. PR [#9647]" answers no how-to question
        if default and not answer_types.says_default(f"{unit.heading} {unit.text}"):
            continue  # asked GzipRequest's default compression level: "同一个路由类…处理 gzip 压缩…" says none
        if port_of and not names_word(f"{unit.heading} {unit.text}", port_of):
            continue
        if limit and not answer_types.says_measure(f"{unit.heading} {unit.text}", limit):
            continue  # asked the maximum size of the content, "Sets a maximum time in seconds …" names none
        if default_of and default_of not in unit.terms | terms(unit.heading or "") | set(contexts[index]):
            continue  # asked the default timeout, "(the default), the exit code … is executed after …" names none
        said = {**term_credits(unit.terms, unit.text, asked), **read}
        # `$ docker build …` says "command" without the word; "use Hey API to generate …" names a tool
        if (
            kind
            and kind_terms
            and (
                says_kind(unit.text, kind, question)
                or (kind in CALLABLE_KINDS and says_kind(code_after(unit, sources[index]), kind))
                or (kind in PRODUCT_KINDS and bool(products(unit.text, question) - everywhere))
            )
        ):
            said = {**said, **dict.fromkeys(kind_terms, 1.0)}
        held = dict(said)
        if states:  # "哪个版本": a line stating the version answers without the word ("FastAPI 0.126.0 移除了 …")
            held.update(dict.fromkeys(type_words & comparable, 1.0))
        for t, c in under.get(unit.heading, {}).items():  # "Add the `pydantic-settings` package" under "Install …"
            held[t] = max(held.get(t, 0.0), HEADING * c)
        credited = bool(maker) and asked_shapes.credits_someone(unit.text)
        if credited:  # "Who made the illustrations …?": "… by Ketrina …"
            held.update(dict.fromkeys(maker, 1.0))
        for t in on_page:  # "… on the return-a-response-directly page": the page's title says it of every line
            held[t] = max(held.get(t, 0.0), contexts[index].get(t, 0.0))
        for t in unit.shown_terms & asked:  # "If you run it with:" `$ python myapp.py` "then …": of myapp.py
            held[t] = max(held.get(t, 0.0), SHOWN)
        for t in terms(" ".join(listed)) & asked:  # "In this case, you have:" / `ItemsService` / `UsersService`
            held[t] = max(held.get(t, 0.0), SHOWN)
        if output:  # the response shown holds the names the question sends
            for t in terms(output) & asked:
                held[t] = max(held.get(t, 0.0), SHOWN)
        pointed, credit = _pointed_to(unit, per_source[index])
        if not pointed and (before_list := listed_before(unit, per_source[index], sources[index])) is not None:
            pointed = [before_list[0]]  # "They work the same way …": the items listed before, by their intro
            for t in terms(" ".join(before_list[1])) & asked:
                held[t] = max(held.get(t, 0.0), POINTED_TO)
        for before in pointed:
            for t, c in term_credits(before.terms, before.text, asked).items():
                held[t] = max(held.get(t, 0.0), credit * c)
        if code_asked and (block := code_after(unit, sources[index])):
            for t in code_asked & terms(block):  # "You can import them from `fastapi.security`:" / APIKeyHeader, …
                held[t] = max(held.get(t, 0.0), HEADING)
        if not code.names_it(index, held):
            continue
        if qualifier and not any(held.get(t) or contexts[index].get(t) for t in qualifier):
            continue  # asked "Which XML library …?", a passage that never says XML names a library for JSON
        if unit_zh != zh and not any(held.get(t) and read.get(t) != UNTRANSLATED for t in comparable - subject):
            continue  # a line in the other language saying none of the names it could share: a guess
        # a line in the other language cannot be read for the question's words in its script: half credit,
        # not full - "推荐" could not rule out an English line that only says "FastAPI" and "GraphQL"
        # and less when a line in the question's language says the names this one shares: the page's translation
        # is there to be read (每个操作的 `operation_id` … over "You can set the OpenAPI `operationId` …")
        unreadable = ECHOED if unit_zh != zh and echoed(held, comparable, said_in_own) else UNREADABLE
        unknown = sum(weight[t] for t in asked - comparable)
        total = sum(weight[t] for t in comparable) + unknown or 1.0
        own = (sum(weight[t] * held.get(t, 0.0) for t in comparable) + unreadable * unknown) / total
        context = sum(weight[t] * max(0.0, contexts[index].get(t, 0.0) - held.get(t, 0.0)) for t in comparable)
        coverage = own + 0.5 * context / total
        if coverage < COVERAGE or own < 1 / 3:
            continue
        unit.coverage, unit.own = coverage, own
        itself = sum(weight[t] * said.get(t, 0.0) for t in comparable) / total
        unit.score = coverage + SAID * itself + (0.15 if unit_zh == zh else 0.0) - 0.03 * index
        # "… use the command:" with the command below it says what the question does not: the command
        leads_to_command = bool(commands_after(unit, sources[index]))
        restates = (
            not (yes_no or why or follows or leads_to_command)
            and _restates(unit, asked_words, question, kind, weights)
            and not listed  # "API keys in:" / "Headers." / "Cookies": the list answers
        )
        if restates or (not where and _points_elsewhere(unit.text)):
            unit.score -= RESTATES
        elif means and offers_means(unit.text, question):
            unit.score += MEANS_BONUS
        if differs and asked_shapes.contrasts(unit.text):
            unit.score += REASON_BONUS  # "… difference between a container image and a container?": "In contrast …"
        if when_to and asked_shapes.condition_then(unit.text, when_to):
            unit.score += REASON_BONUS  # "When should I declare … with plain def?": "If …, then declare … `def`"
        if required_form and asked_shapes.says_required_form(unit.text):
            unit.score += NAME_BONUS  # "What should the dependencies argument … be?": "It should be a `list` of …"
        if follows and states_consequence(unit.text):  # "What happens if …?": "If …, they will receive an error"
            unit.score += REASON_BONUS
        if advice and reasons.repeats_advice(unit.text, advice):
            unit.score -= RESTATES  # "… **you should re-raise the original exception**": the advice, not its reason
        elif advice and reasons.tells_what_goes_wrong(unit.text):
            unit.score += REASON_BONUS  # "If you … don't raise it again …, FastAPI won't be able to notice …"
        if rather and _RATHER.search(unit.text) and states_risk(unit.text):
            # "Why … validated … instead of being used as a dict?": "Instead of … a `dict`, … it could break …"
            unit.score += 2 * REASON_BONUS
        if negated and NEGATES.search(unit.text):  # "What must a scope string not contain?": "… should not contain …"
            unit.score += NEGATION_BONUS
        elif affirmed and asked_shapes.denies_asked(unit.text, asked):
            unit.score -= NEGATION_BONUS  # "Which specification is … based on?": "… but was not based on OAuth2"
        if risk and states_risk(unit.text):  # "What is the risk of …?": "we could be sending … to every client"
            unit.score += REASON_BONUS
        # (the line after a cause names the code asked: "For that, you use `app.add_middleware()`")
        led = bool(pointed) and bool(code.names & unit.terms) and gives_cause(pointed[0].text)
        if why and (under_why_heading(unit) or gives_cause(unit.text) or led):
            # "Why should I hash passwords?": the "Why use password hashing" section; "Why are `Query`, `Path` …
            # functions?": "These functions are there … so that your editor doesn't mark errors …"; "For that, you
            # use `app.add_middleware()`" after the line saying what it makes sure of
            unit.score += REASON_BONUS
        if named_for:  # "What are types that take type parameters called?": "… are called **Generic types**";
            # a line that calls nothing by a name the question does not say cannot answer it
            unit.score += DEFINES_BONUS if gives_name(unit.text, asked_words) else -RESTATES
        elif what_is and defines(unit.text, asked):
            unit.score += DEFINES_BONUS
        if prose_kind and asked_shapes.names_of_kind(unit.text, prose_kind):
            unit.score += NAME_BONUS  # "In which district …?": "It is located in Daxi District, Taoyuan City"
        if credited:
            unit.score += NAME_BONUS
        if where and asked_shapes.names_a_file(unit.text, lowered):
            unit.score += NAME_BONUS  # "Where do I configure the entrypoint …?": "… in a `pyproject.toml` file"
        elif place and asked_shapes.says_place(unit.text):
            unit.score += PLACE_BONUS  # "Where in the specification does … go?": "It goes in the details for …"
        if kind is None and asks_which and unit.label and unit.label.lower() not in lowered:
            unit.score += NAME_BONUS  # "Which proxies renew certificates?": "Traefik: Automatically handles …"
        elif kind is None and asks_one and (title := section_titles.titled_name(unit, per_source[index], lowered)):
            unit.score += NAME_BONUS  # "Which Flask plug-in …?": "### Flask-apispec" / "It's a Flask plug-in, …"
            unit.titled = unit.titled or title
        elif kind is None and instances is not None and lists_instances(instances, unit.text):
            unit.score += NAME_BONUS + 0.1  # "In which editors …?": "… editors: PyCharm, VS Code, Jedi …"
        elif kind is None and asks_one and asked_shapes.labelled_value(unit.text, question):
            unit.score += NAME_BONUS  # "Which password …?": "Password: `secret2`"
        if kind is not None:  # "which parameter / class / header ...": the answer names one the question does not
            # a subject name in code is code: `fastapi` is the module to import from, **FastAPI** the product
            given = {n for n in names if n not in everywhere or f"`{n}" in unit.text}
            if not given and pointed and points_to_kind(unit.text, kind):
                # "该工具会帮助你自动修改…" after "你可以使用 … [`bump-pydantic`]": the tool named before (quoted with it)
                given = {
                    n for n in new_names(LINK_TARGET.sub("]", pointed[0].text), question, kind) if n not in everywhere
                }
            named = (
                bool(given)
                or bool(shown)
                or bool(unit.note)
                or (kind in COMMAND_KINDS and (console_line(unit.text) or leads_to_command))
                or _names_kind_in_question_words(unit.text, question, kind)
            )
            if named:
                unit.score += NAME_BONUS
            if named and says_kind(unit.text, kind):
                unit.score += 0.1  # "The recommended algorithm is "Argon2"": the name and the kind asked for
            if named and keys_kind(unit.text, kind):
                unit.score += KEYED_BONUS  # "What error type …?": `"type": "extra_forbidden",` sets one
            if plural and len(given) > 1:
                unit.score += 0.1  # "Which HTTP methods …?": "use one of: `POST`, `PUT`, `DELETE` or `PATCH`"
        if output:
            unit.score += OUTPUT_BONUS
            unit.text = f"{unit.text} {EXAMPLE_GAP} {output}"
        if shown:  # quoted with the line that answers, the example between them left out
            unit.text = f"{unit.text} {EXAMPLE_GAP} " + (shown if "`" in shown else f"`{shown}`")
        found.append(unit)
    if types:  # a release note read under its heading answers only when it says most of the question
        found = section_titles.kept_titled(found)
    found.sort(key=lambda u: -u.score)
    if embed is not None and found:
        top = found[:12]
        try:
            similarities = embed(question, [u.text for u in top])
        except Exception:  # the embedder is a second opinion; without it the lexical order stands
            similarities = []
        for unit, similarity in zip(top, similarities, strict=False):
            unit.score += 0.5 * float(similarity)
        found = sorted(top, key=lambda u: -u.score) + found[12:]
    return found


def remembered(weights: Weights | None) -> Weights | None:
    """`weights` asking the store only for the terms it has not been asked for yet."""
    if weights is None:
        return None
    seen: dict[str, float] = {}

    def lookup(asked: set[str]) -> dict[str, float]:
        if missing := set(asked) - seen.keys():
            seen.update(weights(missing))
        return {t: seen[t] for t in asked if t in seen}

    return lookup


def _pointed_to(unit: Unit, units: list[Unit]) -> tuple[list[Unit], float]:
    """The lines a line opening "This …" points back to: its antecedent, and that one's when it points back
    too ("… pass in the `tokenUrl` parameter. This parameter contains the URL …" / a tip / "This parameter
    doesn't create that endpoint"), with the credit their key terms give the line (POINTED_TO). A line opening
    "It …" speaks of the line naming "it" less surely (IT_NAMED: a lesser "它 …" line about FastAPI Cloud is no
    answer to who built it)."""
    found: list[Unit] = []
    while len(found) < 2 and (before := antecedent(found[-1] if found else unit, units)) is not None:
        found.append(before)
    if not found and (named := named_by_it(unit, units)) is not None:
        return [named], IT_NAMED  # "It has an interesting, uncommon feature …": of Hug, not of the "It …" lines between
    subject = passage_subject(unit, units) if not found else None  # "It was released …": the paragraph's subject
    return ([subject] if subject is not None else found), POINTED_TO


def _names_near(name: str, unit: Unit, lines: list[str], e: Evidence) -> bool:
    """The line, OWNER_LINES around it, its headings or its page's title say `name`."""
    near = lines[max(0, unit.line - OWNER_LINES) : unit.line + OWNER_LINES + 1]
    return names_word(" ".join([e.title, unit.heading or "", *near]), name)


def _names_kind_in_question_words(text: str, question: str, kind: str) -> bool:
    """ "Which decorator parameter lets me declare additional responses?" is answered by "a parameter
    `responses`": the line gives as code, of the kind asked for, a word the question only writes as prose."""
    if not says_kind(text, kind):
        return False
    code = {c for c in QUOTED_CODE.findall(text) if re.fullmatch(r"[a-z]+", c)}
    return any(re.search(rf"(?<![`\w]){c}(?![`\w])", question) for c in code)


def _restates(unit: Unit, asked_words: set[str], question: str, kind: str | None, weights: Weights | None) -> bool:
    """The line says nothing the question does not: no word of its own, no name, no code (`Form` answers "what
    do I use to receive form fields"); asked for an address, no address the question does not write whole (the
    callback URL put together from the two parts the question gives). The knowledge base's subject and "you can
    use" add nothing: "You can use Pydantic models to declare query parameters in FastAPI" restates "How do you
    declare query parameters with a Pydantic model?"."""
    code = QUOTED_CODE.findall(unit.text)
    own = unit.terms - asked_words - _MEANS_WORDS
    names = new_names(unit.text, question)
    if own and names:
        subject = subject_names(names, weights)
        names -= subject
        own -= {t for name in subject for t in terms(name)}
    return (
        not own
        and not names
        and not (kind == "url" and new_names(unit.text, question, kind))
        and all(c in question for c in code)
        and not (kind and _names_an_instance(unit.text, code, question, kind))
    )


# "You can read more at [Pydantic Settings: Dotenv (.env) support](…)": the link's title holds the question's
# words, and the line says nothing of its own - what it points to does
_READ_MORE = re.compile(
    r"^(?:you can )?(?:read|learn|see) more\b|^for more (?:details|information|info)\b|^more (?:details|info)\b"
    r"|^(?:更多|详细)(?:信息|细节|内容|说明)?(?:请)?(?:参阅|查看|阅读|参见)|(?:阅读|了解|参阅)更多",
    re.I,
)


def _points_elsewhere(text: str) -> bool:
    """A "read more at [link]" line: a pointer to where the answer is, not the answer."""
    return "](" in text and bool(_READ_MORE.search(text.strip().lstrip("*_ ")))


def _names_an_instance(text: str, code: list[str], question: str, kind: str) -> bool:
    """The line gives a name of the kind asked in code ("use the `data` parameter"), one the question writes only
    as a plain word ("… send form data …"): a name, not a restatement."""
    lowered = question.lower()
    for name in code:
        if f"`{name}`".lower() in lowered or re.search(rf"\b{re.escape(name)}\s+{kind}", lowered):
            continue  # the question names it as the kind already
        if re.search(rf"`{re.escape(name)}`\s+{kind}|{kind}\s+`{re.escape(name)}`", text, re.I):
            return True
    return False


def extractive_sentences(
    question: str,
    sources: list[Evidence],
    embed: Embed | None = None,
    max_sentences: int = 3,
    weights: Weights | None = None,
) -> list[Sentence]:
    """The best 1-3 units, without near-duplicates, each citing its source; [] when none covers the question."""
    yes_no = bool(_YES_NO.search(question))
    return choose(question, rank(question, sources, embed, weights), sources, max_sentences, yes_no)


def confident_quotes(
    question: str, sources: list[Evidence], embed: Embed | None = None, weights: Weights | None = None
) -> list[Sentence]:
    """The extractive answer when its best line says the question's key terms itself (QUOTE_OWN of them by
    weight, on the line or its headings, in the question's language): the evidence states the answer, and a
    quote of it is the most faithful answer there is. [] otherwise: no line covers the question (a paraphrase,
    facts spread over lines) or the evidence is in the other language - what the model is for."""
    ranked = rank(question, sources, embed, weights)
    if not ranked or ranked[0].own < QUOTE_OWN or ranked[0].zh != has_cjk(question):
        return []
    top = ranked[0]
    if (
        _ASKS_THING.search(question)
        and not asks_why(question)
        and introduces_example(top, sources[top.source])
        and not new_code(top.text, question)
    ):
        # asked what a thing is, "… you will see an error like:" names no code the question does not: the answer
        # is the example below it, which a quote leaves out ("add a custom header `X-Process-Time` …:" names
        # it and stays a quote; a reason or a way is said by the line itself)
        return []
    return choose(question, ranked, sources, 3, yes_no=bool(_YES_NO.search(question)))


def _line_of(lines: list[str], unit: Unit) -> str:
    """The whole source line a unit was cut from (a sentence of it, or all of it)."""
    return lines[unit.line] if 0 <= unit.line < len(lines) else unit.text
