"""What kind of name a question asks for ("Which class …", "哪个参数") and the names a line gives of that kind:
a class is CamelCase code, a header is Hyphen-Cased, a parameter lower-case code."""

from __future__ import annotations

import re

from kb_agent.agent.claim_terms import LINK_TARGET
from kb_agent.text.tokenize import has_cjk, tokenize

_KINDS = (
    "class|package|parameter|argument|function|method|header|exception|module|constant|setting|option|command|"
    "library|type|url|field|name|attribute|property|middleware|decorator|algorithm|variable|key|tool|server|"
    "client|marker|image|format|member|model|file|directory|folder|language"
)
# a kind's plural when it ends in y: "Which libraries …", "which properties …"
_IES_PLURALS = "libraries|properties|directories"
# "what does X mean for a parameter", "what happens if I declare cookie parameters": no kind is asked
_VERBS = "does|do|did|is|are|was|were|can|could|should|would|will|must|has|have|happens?|happened|if|when"
# the kind is the phrase's last noun: "which path operation decorator parameter" asks for a parameter
_ASKS_FOR_A_NAME = re.compile(
    rf"\b(?:which|what)\b(?:(?!\b(?:{_VERBS})\b)[^?]){{0,40}}?\b((?:(?:{_KINDS})s?\s+)*(?:{_IES_PLURALS}|{_KINDS}))s?\b(?!-)"
    # "什么情况下 … 参数", "什么时候 …": asks a circumstance, not a name
    r"|(?:哪个|哪些|什么(?!情况|时候|场合|场景|条件|原因|时间)|哪种|哪一种)[^，,？?\s]{0,6}?(语言|类(?![型别似])|包|参数|函数|方法|头|异常|模块|常量|库|命令|字段|属性|成员|中间件|变量|算法|工具|服务器|模型|文件|目录|文件夹|键)"
    r"|(类|包|参数|函数|方法|异常|模块|常量|库|命令|字段|属性|中间件|变量|算法)(?:是|叫)(?:什么|哪个|哪些)[？?]?\s*$",
    re.I,
)
_CLASS_NAME = re.compile(r"(?:\w+\.)*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*(?:\(\))?")  # BackgroundTasks, HTTPException
_HEADER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?::.*)?")  # X-Process-Time, Cache-Control: no-cache
# fastapi.sse, compare_digest(), docs_url, exclude_unset=True, a method with its dot: `.add_task()`, a call
# with its arguments on a class: `SQLModel.metadata.create_all(engine)`
_LOWER_NAME = re.compile(r"@?\.?(?:[A-Z]\w*\.)*[a-z_][\w.]*(?:\([^()]*\)|=\S+)?")
_CONSTANT_NAME = re.compile(r"(?:\w+\.)*[A-Z][A-Z0-9_]+")  # HTTP_418_IM_A_TEAPOT
# FASTAPI_ENV, PORT: an environment variable is named in capitals (its kind, asked for by "environment variable")
_ENVIRONMENT_NAME = re.compile(r"\$[A-Z][A-Z0-9_]*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
ENVIRONMENT_VARIABLE = "environment variable"
_ENVIRONMENT = re.compile(r"\b(?:environment|env)\s+var(?:iable)?s?\b|环境变量", re.I)
# redoc.standalone.js, app/main.py, .env: a file is named with its extension (or is a dotfile)
_FILE_NAME = re.compile(r"(?:[\w.-]+/)*(?:[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,6}|\.[\w-]+)")
# ./src/client, static/, app/routers: a directory is a path
_DIRECTORY_NAME = re.compile(r"\.{0,2}/?[\w.-]+(?:/[\w.-]*)+|[\w.-]+/|/[\w.-]+")  # /code: an absolute one too
# python-dotenv, email-validator, "fastapi[standard]": what an installer takes, not `BaseSettings` or "dotenv"
_PACKAGE_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*(?:\[[\w,-]+\])?")
# the shape a name of some kinds has (a code name, not a quoted string); other kinds take any name
_SHAPES = {
    **dict.fromkeys(("class", "middleware", "client", "model", "类", "中间件", "模型"), _CLASS_NAME),
    # an exception class is named for what it is: `WebSocketException`, `RequestValidationError` (not `Depends`)
    **dict.fromkeys(("exception", "异常"), re.compile(r"(?:\w+\.)*[A-Z]\w*(?:Exception|Error|Warning)(?:\(\))?")),
    **dict.fromkeys(("header", "头"), _HEADER_NAME),
    **dict.fromkeys(
        (
            "module",
            "parameter",
            "argument",
            "attribute",
            "field",
            "member",
            "模块",
            "方法",
            "参数",
            "属性",
            "成员",
            "字段",
        ),
        _LOWER_NAME,
    ),
    # FastAPI's parameter functions are capitalised and named as empty calls: `Query()`, `Body()` (not a model
    # built with its fields, `UserIn(username="john")`)
    **dict.fromkeys(("function", "函数"), re.compile(rf"{_LOWER_NAME.pattern}|(?:\w+\.)*[A-Z]\w*\(\)")),
    **dict.fromkeys(("constant", "常量"), _CONSTANT_NAME),
    ENVIRONMENT_VARIABLE: _ENVIRONMENT_NAME,
    **dict.fromkeys(("package", "包"), _PACKAGE_NAME),
    **dict.fromkeys(("file", "文件"), _FILE_NAME),
    **dict.fromkeys(("directory", "folder", "目录", "文件夹"), _DIRECTORY_NAME),
    # a method is code or an HTTP method: "Which HTTP methods send a body?" - `POST`, `PUT`
    **dict.fromkeys(("method", "方法"), re.compile(rf"{_LOWER_NAME.pattern}|[A-Z]{{3,7}}")),
}
# what names a thing: code, identifiers, CamelCase (two capitals), a short quoted string ("Argon2")
# and a link's one-word text: "a Pydantic [Url](…) type"
# (a command-line option is code written bare too: "--forwarded-allow-ips", "--root-path")
_NAME = re.compile(
    r"`([^`]+)`|\b(\w+_\w+)\b|\b([a-z]+[A-Z]\w*)\b|\b([A-Z][a-z0-9]*[A-Z]\w*)\b|[\"“]([^\"”\s]{2,30})[\"”]"
    r"|\[([A-Z][\w.]*)\](?!\w)|(?<![\w`-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])"
)


def has_shape(kind: str) -> bool:
    """Is a name of this kind told by its shape (a class is CamelCase code), not by any quoted string?"""
    return kind in _SHAPES


# "What is the name of the cookie …?": a name, of the kind that follows when it is one ("… of the header")
# (the phrase's last noun: "the name of the old official FastAPI Docker image that …" asks an image's)
NAME_OF = re.compile(
    r"\bnames?\s+of\s+(?:the|a|an|this|that|its|their)\s+(?:[\w-]+\s+){0,4}?(\w+)"
    r"(?=\s+(?:that|which|who|whose|where|when|in|on|of|for|from|to|with|used|does|do|did|is|are|was|were)\b|\s*[?,.]|$)",
    re.I,
)


def asked_kind(question: str) -> str | None:
    """What kind of name a question asks for ("class" in "Which class ...", "参数" in "哪个参数"), if any."""
    match = _ASKS_FOR_A_NAME.search(question)
    if match:
        kind = re.sub(r"ies$", "y", next(g for g in match.groups() if g).split()[-1].lower())
        if kind in ("variable", "变量") and _ENVIRONMENT.search(question):
            return ENVIRONMENT_VARIABLE  # named in capitals: FASTAPI_ENV, not `--workers`
        return kind
    named = NAME_OF.search(question)
    if named is None:
        return None
    return named.group(1).lower().removesuffix("s")


def free_kind(kind: str | None) -> bool:
    """A kind no name shape or word list knows ("cookie" in "the name of the cookie")."""
    if not kind:
        return False
    return not has_cjk(kind) and kind not in _SHAPES and re.fullmatch(_KINDS, kind) is None


# a name stands for a thing of a free kind when it is written beside the word: "an optional `last_query` cookie"
_BESIDE = 3  # words between the name and the kind's word


def names(text: str, code_only: bool = False) -> set[str]:
    """The names `text` gives: code, identifiers, CamelCase, short quoted strings (not with `code_only`)."""
    found = {next(g for g in m.groups() if g) for m in _NAME.finditer(text)}
    return (
        found - {m.group(5) or m.group(6) for m in _NAME.finditer(text) if m.group(5) or m.group(6)}
        if code_only
        else found
    )


# an import statement names its module without backticks: "from fastapi.middleware.trustedhost import …"
_IMPORTED_MODULE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+))")
# or quoted as code in a sentence - the other import a page mentions: "You could also use `from starlette.requests
# import Request`", what answers only where else to import from
_QUOTED_IMPORT = re.compile(r"`(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+))")
_MODULE_KINDS = frozenset({"module", "模块", "package", "包"})
# asked where else a name can be imported from: "could I also import Request instead of from fastapi?", "还可以从…"
_ELSEWHERE = re.compile(r"\b(?:also|instead|else|other)\b|还|也|另", re.I)


def _imports(text: str, question: str) -> list[re.Match[str]]:
    """The imports the line gives as its own (one at its start), and, asked where else to import from, those it
    quotes."""
    found = list(_IMPORTED_MODULE.finditer(text))
    return found + list(_QUOTED_IMPORT.finditer(text)) if _ELSEWHERE.search(question) else found


# a tool or library is a product: named in words, capitalised mid-sentence ("we can use Hey API to generate …",
# "可以使用 Hey API 来生成")
PRODUCT_KINDS = frozenset({"tool", "library", "工具", "库"})
# a link's text too: "you could use something like [HTTPX](…) or [Requests](…)"
_PRODUCT = re.compile(r"(?<=[a-z,\u4e00-\u9fff] )\[?([A-Z][\w.+-]*(?: [A-Z][\w.+-]*){0,3})")
_HEADER_KINDS = frozenset({"header", "头"})
# an address written out on its own, not a link's target ("](https://…)")
_BARE_URL = re.compile(r"(?<![(\w])https?://[^\s()<>\[\]`'\"]+")
# X-Forwarded-For, Cache-Control; not a phrase's first words ("Cross-Origin Resource Sharing")
_BARE_HEADER = re.compile(r"\b[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z0-9]*)+\b(?!\s+[A-Z])")


def products(text: str, question: str) -> set[str]:
    """The products `text` names in words mid-sentence that the question does not ("… use Hey API to …")."""
    asked = question.lower()
    return {name for name in _PRODUCT.findall(text) if name.lower() not in asked}


def new_names(text: str, question: str, kind: str | None = None) -> set[str]:
    """The names `text` gives that the question does not; asked for a kind with a shape (a class, a header),
    only names of that shape. Names most sources give are kept: the class asked for is on every page about it."""
    shape = _SHAPES.get(kind or "")
    given = names(text, code_only=shape is not None)
    if kind in _MODULE_KINDS:
        given |= {imported.group(1) or imported.group(2) for imported in _imports(text, question)}
    if kind in PRODUCT_KINDS:
        given |= products(text, question)
    if kind == "url":  # an address written bare on its own: "https://www.external.org/events/invoices/2expen51ve"
        given |= {url.rstrip(".,;:") for url in _BARE_URL.findall(text)}
    if kind in _HEADER_KINDS:  # a header is named as written, or as a link's text: "[X-Forwarded-For](…)"
        given |= set(_BARE_HEADER.findall(LINK_TARGET.sub("]", text)))
    if kind is not None and free_kind(kind):
        given = {name for name in given if _beside(text, name, kind)}
    return {
        name
        for name in given
        if not _written_in(name.strip("()"), question) and (shape is None or shape.fullmatch(name))
    }


def _written_in(name: str, question: str) -> bool:
    """Does the question write the name? A capitalised name as a word of its own, in any case: `Url` (a type) is
    not the "url" of "callback_url"; any other inside a longer name too (`templates` of "Jinja2Templates")."""
    lowered, asked = name.lower(), question.lower()
    if not name[:1].isupper() or has_cjk(name):
        return lowered in asked
    return name in question or re.search(rf"(?<!\w){re.escape(lowered)}(?!\w)", asked) is not None


def _beside(text: str, name: str, kind: str) -> bool:
    gap = rf"(?:\W+\w+){{0,{_BESIDE}}}?\W+"
    quoted = rf"[`\"'*]*{re.escape(name)}[`\"'*]*"
    return bool(re.search(rf"{quoted}{gap}{kind}s?\b|\b{kind}s?{gap}{quoted}", text, re.I))


# a line that installs a name says it is a package: "add `python-dotenv` to your project"
_SAYS_PACKAGE = re.compile(r"\b(?:install(?:ed|ing)?|add|pip|uv)\b|安装|添加", re.I)


COMMAND_KINDS = frozenset({"command", "命令"})
# "Which method do you call …?": a call (`router.include_router(other_router)`) names a method, and calling is what
# one does with one
CALLABLE_KINDS = frozenset({"method", "function", "方法", "函数"})
CALL_WORDS = frozenset(tokenize("call called calls calling 调用"))
_CALL = re.compile(r"\b[A-Za-z_][\w.]*\(")


def console_line(text: str) -> bool:
    """A line typed at a shell prompt: `$ docker build -t myimage .` is a command without the word."""
    return text.startswith("$ ")


def points_to_kind(text: str, kind: str) -> bool:
    """The line opens by pointing back to a thing of the kind asked ("该工具会帮助你…", "This tool rewrites …"):
    the name it means is in the line before."""
    if has_cjk(kind):
        return bool(re.match(rf"(?:该|这个|这些|此|这|那个)\s*{kind}", text))
    return bool(re.match(rf"(?:this|that|these|those|such)\s+{kind}s?\b", text, re.I))


def keys_kind(text: str, kind: str) -> bool:
    """The line sets the kind asked as a key: `"type": "extra_forbidden",` answers "What error type …?", and so
    do `media_type="text/html"` and `type: string` - the value beside the key is a thing of that kind."""
    if has_cjk(kind):
        return False
    return bool(re.match(rf"""\s*["']?(?:\w+[_-])?{kind}["']?\s*[:=]\s*\S""", text, re.I))


# a language is named, not described: "… a **TypeScript SDK**" answers "哪种语言的 SDK" without saying 语言
_LANGUAGE_KINDS = frozenset({"language", "语言"})
_LANGUAGES = re.compile(
    r"\b(?:Python|TypeScript|JavaScript|Java|Kotlin|Swift|Golang|Rust|Ruby|PHP|C\+\+|C#|Dart|Scala|Elixir|"
    r"English|Chinese|Spanish|French|German|Japanese|Korean|Portuguese|Russian|Latin)\b"
    r"|中文|英语|英文|西班牙语|法语|德语|日语|韩语|葡萄牙语|俄语|拉丁语"
)


def names_a_language(text: str, question: str) -> bool:
    """Does the line name a (programming or natural) language the question does not?"""
    return any(m.group(0).lower() not in question.lower() for m in _LANGUAGES.finditer(text))


# kinds whose names end in the kind's word
_NAMED_BY_SUFFIX = {
    **dict.fromkeys(("exception", "异常"), "(?:Exception|Error)"),
    **dict.fromkeys(("middleware", "中间件"), "Middleware"),
}


def says_kind(text: str, kind: str, question: str = "") -> bool:
    if kind in ("package", "包") and _SAYS_PACKAGE.search(text):
        return True
    # the other import a page mentions says which module when the other one is asked for
    if kind in _MODULE_KINDS and _ELSEWHERE.search(question) and _imports(text, question):
        return True
    if kind in COMMAND_KINDS and console_line(text):
        return True
    if kind in CALLABLE_KINDS and _CALL.search(text):
        return True
    if kind in _LANGUAGE_KINDS and names_a_language(text, question):
        return True
    # `WebSocketException` is an exception by its name: "哪个异常" is answered by "抛出 `WebSocketException`"
    if (suffix := _NAMED_BY_SUFFIX.get(kind)) and re.search(rf"[A-Za-z]{suffix}\b", text):
        return True
    return kind in text if has_cjk(kind) else bool(re.search(rf"\b{kind}s?\b", text, re.I))


# "In which editors …?", "Which databases …?": the kind asked for, plural, after "which" and a preposition
_WHICH_PLURAL = re.compile(
    r"^\s*(?:(?:in|on|at|from|for|with|to|by|of)\s+)?which\s+(?:\w+\s+){0,2}?([a-z]{3,}s)\b", re.I
)
_LISTED_NAME = re.compile(r"(?:^|,|\band\b|\bor\b)\s*[*`\"\[]*([A-Z`][\w.-]*)")
INSTANCES = 2  # names a line must list after the kind asked for


def instances_of(question: str) -> re.Pattern[str] | None:
    """Asked which things of a kind no name shape covers ("editors"): where a line introduces instances of it
    ("editors: …", "databases like …", "proxies such as …"). None otherwise."""
    match = _WHICH_PLURAL.search(question)
    if match is None:
        return None
    noun = match.group(1).lower()
    stem = noun[:-3] if noun.endswith("ies") else noun[:-1]  # proxies - proxy, editors - editor
    return re.compile(rf"\b{re.escape(stem)}\w*\s*(?::|,?\s+(?:such as|like|including|e\.g\.,?))", re.I)


def lists_instances(lead: re.Pattern[str], text: str) -> bool:
    """The line names INSTANCES or more, capitalised or as code, right after the kind: "… editors: PyCharm, VS
    Code, Jedi based editors", not "… tested on multiple editors"."""
    found = lead.search(text)
    return found is not None and len(_LISTED_NAME.findall(text[found.end() : found.end() + 160])) >= INSTANCES


_QUALIFIER = re.compile(r"\b(?i:which|what)\s+((?:[A-Z][\w.-]*\s+){1,2})([a-z]+)")


def kind_qualifier(question: str) -> set[str]:
    """The terms of the name that narrows the kind asked for ("Which XML library …?" -> xml): a library for
    JSON is not one. Empty when no capitalised name stands between the question word and the kind."""
    found, kind = _QUALIFIER.search(question), asked_kind(question)
    if found is None or kind is None or not found.group(2).startswith(kind[:-1] if kind.endswith("y") else kind):
        return set()
    return set(tokenize(found.group(1)))
