"""Deterministic routing for the unambiguous cases: no LLM call when a rule decides."""

from __future__ import annotations

import re

from kb_agent.agent.state import Route

# who or what the assistant is and what it can do: small talk answered from a fixed text, never by the model
# (a 1.5B model said it was "developed by Anthropic")
_EN_IDENTITY = (
    r"who are you|what are you|what can you do|what do you do|"
    r"who (?:am i|are we) (?:talking|speaking|chatting) (?:to|with)|who(?:'s| is) (?:this|that|there|speaking)|"
    r"what(?:'s| is) your name|what should i call you|are you (?:a |an )?(?:bot|robot|human|real|ai|person|machine)"
    r"(?: or (?:a |an )?(?:bot|robot|human|real person|person|ai|machine))?|"
    r"(?:please )?introduce yourself|tell me about yourself|who (?:made|built|created|developed|designed|trained|wrote) you|"
    r"what can i ask(?: you)?(?: about)?|how can you help(?: me)?|what can you help (?:me )?with|"
    r"what(?:'s| is) your (?:purpose|job|role)|how do you work|"
    r"(?:can|could) you tell me (?:what you (?:do|are|can do)|about yourself)"
)
_ZH_IDENTITY = (
    r"你是谁|您是谁|(?:你|您)(?:能|可以|会)(?:帮我)?做(?:些|点)?什么|你叫什么(?:名字)?|(?:请)?(?:介绍一下|介绍下)(?:你自己|自己)|"
    r"你是(?:机器人|真人|人工智能|AI)(?:吗|还是(?:机器人|真人|人工智能|AI|人)(?:呢|啊)?)|你是(?:干什么|做什么|干嘛)的|我(?:在)?(?:和|跟)谁(?:在)?(?:说话|聊天|对话)|你是什么|你能帮我(?:做)?什么|(?:你|您)是哪位|"
    # who made the assistant ("你是谁开发的"): the assistant's maker, not the software the documents are about
    r"(?:你|您)是(?:由)?(?:谁|哪家公司|哪个公司|哪个团队)(?:开发|制作|创建|训练|做|写)(?:出来)?的|谁(?:开发|制作|创建|训练|做)了(?:你|您)"
)
# understanding said back ("that clears it up", "makes sense now", "sounds good", "明白了"): small talk, and what an
# acknowledgement reply answers
_EN_UNDERSTOOD = (
    r"(?:(?:that|this|it) )?(?:clears|cleared) (?:it|that|things|everything) up|(?:(?:that|this|it) )?(?:all )?makes"
    r" (?:(?:a lot of|perfect|total) )?sense(?: now)?|(?:that )?sounds (?:good|great)|understood|gotcha|no worries|all good"
)
_ZH_UNDERSTOOD = r"好的|收到|明白了|(?:我)?懂了|清楚了|了解了|原来如此"
# closing a conversation ("ok that's all for now, bye!"): small talk, and what a farewell reply answers
_EN_FAREWELL = (
    r"(?:good)?bye(?: for now)?|bye-bye|see (?:you|ya)(?: later| soon| tomorrow)?|"
    r"(?:talk|catch you) (?:later|tomorrow)|take care|"
    r"talk to you (?:later|soon|tomorrow)|"
    r"(?:that'?s|that is) (?:all|it)(?: (?:for now|for today|i needed|thanks))?|(?:i'?m|i am|we'?re) (?:done|all set)|"
    r"no more questions|nothing else|have a (?:nice|good|great) (?:day|one|evening|weekend)"
)
_ZH_FAREWELL = r"再见|再会|拜拜|(?:回头|下次|明天|明儿|晚点|待会儿?)见|(?:回头|下次|改天|明天|以后|晚点|有空)(?:再)?聊|再聊|就这些|没有了|没别的了|先这样|(?:今天|那)?(?:就)?(?:先)?到这(?:里|儿)"
_EN_PHRASE = (
    r"(?:hi|hello|hey|hiya|yo|howdy|greetings|sup|wassup|(?:good )?(?:morning|afternoon|evening)|good (?:night|day)|"
    r"(?:i'?m|i am) new(?: here)?|(?:good|nice|great) to (?:e-)?(?:see|meet) you|pleased to meet you|"
    r"what'?s new|are you (?:still )?(?:there|around)|(?:can|do) you hear me|long time no see|"
    r"lol|lmao|ha(?:ha)+|he(?:he)+|"
    r"(?:thanks?|thank (?:u|ya))(?: you)?(?: (?:so|very) much| a lot| a ton| a bunch)?(?: again| in advance)?"
    r"(?: for (?:(?:your|the|all the|all your) (?:help|time|support|patience|answers?)|everything|that|this|helping(?: me| us)?))?"
    r"|thx|thanx|ty|tysm|cheers|"
    r"thank you kindly|much appreciated|many thanks|much obliged|(?:i )?appreciate (?:it|that|your help|the help)|"
    r"you(?:'ve| have) been (?:very |really |so |super )?(?:helpful|great|a (?:great |big )?help)|"
    r"you rock|(?:good|nice|great|awesome) (?:job|work)|well done|you(?:'?re| are) the best|"
    r"(?:that|this|it) (?:answers|answered) (?:my question|it)|"
    rf"{_EN_UNDERSTOOD}|(?:i )?(?:see|understand)(?: now)?|"
    rf"{_EN_FAREWELL}|"
    rf"{_EN_IDENTITY}|how are you(?: doing)?|how(?:'s| is) (?:it going|everything(?: going)?)|what'?s up|"
    r"(?:i )?hope (?:you(?:'?re| are) (?:doing )?(?:well|good|fine|ok(?:ay)?)|(?:all is|everything is|all'?s) well"
    r"|you(?:'?re| are) having a (?:good|great|nice|lovely) (?:day|morning|afternoon|evening|weekend)"
    r"|your (?:day|morning|afternoon|evening|week|weekend) (?:is|has been) (?:going )?(?:well|good|great|nicely|fine))|"
    r"how(?:'s| is| was) your (?:day|morning|afternoon|evening|weekend)(?: going)?|"
    r"(?:can|could) you help(?: me| us)?|nice to meet you|"
    r"ok(?:ay)?|great|cool|nice|awesome|perfect|got it|"
    r"(?:that|this|it|you)(?: really)? (?:helped|helps|worked|works)(?: a lot)?|"
    r"(?:(?:that|this|it)|(?:that|this|the|your) (?:answer|reply|response|explanation))(?:'s| is| was) "
    r"(?:very |really |so |super )?(?:helpful|great|useful|perfect|clear)|"
    r"(?:very |really )?helpful|you(?:'?re| are) (?:great|helpful|awesome|a lifesaver)|you saved (?:me|my day))"
    r"(?: (?:there|all|everyone|again|a lot|kb-agent|bot|today|yesterday|earlier|before|me|for me|for us|right now|now"
    r"|on your (?:side|end)|with you|over there))*"
)
_CHITCHAT_EN = re.compile(rf"{_EN_PHRASE}(?: (?:and )?{_EN_PHRASE})*", re.I)
# "今天过得怎么样", "最近还好吗", "最近忙吗": how are you
_ZH_HOW_ARE_YOU = (
    r"(?:你|您)?(?:今天|最近|这几天|这些天)(?:过得|过的)?(?:怎么样|如何|还好吗?|好吗|好不好)"
    r"|(?:你|您)?(?:今天|最近|这几天|这些天)?(?:还)?(?:忙吗|忙不忙)"
)
_ZH_PHRASE = (
    rf"(?:请问)?(?:你好|您好|嗨|哈喽|早上好|下午好|晚上好|早安|晚安|早啊|早|谢谢|多谢|感谢|谢啦|(?:非常|十分|万分)感谢|"
    rf"(?:你|您)?在吗|在不在|(?:很)?高兴认识(?:你|您)|认识(?:你|您)很高兴|哈哈+|呵呵+|嘿嘿+|麻烦(?:你|您)?了|"
    rf"(?:你|您)?(?:真|太)棒了?|(?:今天|最近|这几天|这么晚)?(?:也|还)?辛苦(?:你|您)?了|"
    rf"{_ZH_FAREWELL}|没有(?:别的|其他)?问题了?|没问题了|"
    rf"你好吗|{_ZH_UNDERSTOOD}|辛苦|太好了|不错|有帮助|很有帮助|帮大忙了|{_ZH_IDENTITY}|"
    rf"(?:你|您)?(?:真是)?帮了(?:我)?(?:一个|很)?大忙了?|(?:你|您)?帮了我很多|太感谢了?|{_ZH_HOW_ARE_YOU})"
    r"(?:你|您)?(?:的)?(?:耐心|详细|细心)?(?:的)?(?:帮助|解答|回答|讲解)?(?:啦|呀|啊|呢|吧)?"
)
_CHITCHAT_ZH = re.compile(rf"(?:{_ZH_PHRASE})+")


def is_chitchat(query: str) -> bool:
    """Greetings, thanks, "who are you" and small talk (zh, en): every clause is one of those phrases."""
    clauses = [c for c in re.split(r"[,.!?;~…，。！？；～\n]+", query) if c.strip()]
    if not clauses or len(query) > 120:
        return False
    for clause in clauses:
        # an emoji or symbol says nothing a phrase does not ("Hi there 👋")
        text = re.sub(r"^[\s:()（）]+|[\s:()（）]+$", "", re.sub(r"[^\w\s'’:()（）-]", " ", clause))
        if not (_CHITCHAT_EN.fullmatch(text) or _CHITCHAT_ZH.fullmatch(text.replace(" ", ""))):
            return False
    return True


_IDENTITY = re.compile(rf"\b(?:{_EN_IDENTITY})\b|{_ZH_IDENTITY}", re.I)


def asks_identity(query: str) -> bool:
    """Does small talk (a query `is_chitchat` accepted) ask who or what the assistant is, or what it can do?"""
    return bool(_IDENTITY.search(query))


# the kinds of small talk a reply answers without a model, first match wins
_REPLIES = [
    (
        re.compile(rf"{_EN_FAREWELL}|{_ZH_FAREWELL}", re.I),
        "Goodbye! Come back any time you have a question about the documents.",
        "再见！有关于文档的问题随时再来问我。",
    ),
    (
        re.compile(
            r"thank|thx|\bty\b|cheers|appreciat|obliged|helpful|helped|lifesaver|saved|you rock|\b(?:job|work)\b|well done"
            r"|the best|谢|感谢|辛苦|帮助|帮大忙|帮了|麻烦|棒",
            re.I,
        ),
        "You're welcome! Ask me anything else about the indexed documents.",
        "不客气！还有关于文档的问题可以继续问我。",
    ),
    (
        re.compile(
            rf"how are you|how(?:'s| is) (?:it going|everything)|what'?s up|hope (?:you|all|everything)|你好吗|"
            rf"{_ZH_HOW_ARE_YOU}",
            re.I,
        ),
        "I'm doing well, thanks! What would you like to know about the indexed documents?",
        "我很好，谢谢！想了解文档里的什么内容？",
    ),
    (  # "got it", "that clears it up", "明白了": an acknowledgement, not a greeting to answer with who kb-agent is
        re.compile(rf"\b(?:ok(?:ay)?|got it|cool|perfect|awesome|i see|{_EN_UNDERSTOOD})\b|{_ZH_UNDERSTOOD}", re.I),
        "Glad that helps! Ask me anything else about the indexed documents.",
        "好的！还有关于文档的问题可以继续问我。",
    ),
]
_HELLO = (
    "Hello! I'm kb-agent: ask me about the indexed documents and I'll answer with citations.",
    "你好！我是 kb-agent，可以根据已索引的文档回答问题并给出引用。",
)


def small_talk_reply(query: str, zh: bool) -> str:
    """The reply to small talk without a model: a farewell to "bye", "you're welcome" to thanks, who kb-agent
    is to a greeting or "who are you" (what kb-agent is never comes from a model)."""
    if not asks_identity(query):
        for pattern, english, chinese in _REPLIES:
            if pattern.search(query):
                return chinese if zh else english
    return _HELLO[1] if zh else _HELLO[0]


TICKET_RE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b")
URL_RE = re.compile(r"https?://\S+")
_PATH_RE = re.compile(
    r"(?:[\w.-]+/)*[\w.-]+\.(?:md|mdx|rst|txt|py|js|ts|tsx|java|go|rs|sql|sh|ya?ml|json|toml|ini|cfg|conf|"
    r"pdf|docx|xlsx|csv|html?|jsonl)\b",
    re.I,
)
# real quotes or backticks; a single quote only when it is not an apostrophe ("Bob's manager's", "can't")
_QUOTED_RE = re.compile(r"`([^`\n]{2,80})`|[\"“]([^\"“”\n]{2,80})[\"”]|(?<![\w'])'([^'\n]{2,80})'(?![\w'])")
_CONSTANT_RE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
# the words of a file question that say it is one, not what the file is about ("tutorial" may be: a folder says it)
FILE_QUESTION_WORDS = frozenset(
    "file files document documents doc docs documentation page pages guide guides section "
    "named called containing mention mentions explain explains describe describes cover covers introduce "
    "introduces talk talks read learn point show find list locate me all there "
    "文件 文档 页面 教程 查找 寻找 找到 列出 哪些 哪个 哪一个 关于 有关 包含 介绍 介绍了 说明 讲 有没有 哪里 可以".split()
)
_AUXILIARY = "does|do|did|should|will|would|can|could"
_DOCUMENTING = "explain|cover|document|describ|mention|discuss|talk|introduc|show|list|read|learn|say|tell|teach"
_ZH_DOCUMENTING = "讲|介绍|说明|提到|解释|描述|涉及|讨论|包含|关于|有关|教"
# asking *where* something is documented; "what kind of file ..." is a question about content
_FILE_DISCOVERY_RE = re.compile(
    r"\b(?:find|list|show|locate|search for)\b(?: (?:me|all|the|a|any|every))*(?: [\w-]+){0,2} "
    r"(?:files?|pages?|documents?|docs|documentation)(?![\w-])"
    # "Which headers do file responses include?" asks for headers; "In which file does the example put the
    # Settings class?" for the file the example writes (config.py); "Which file does the tutorial explain … in?" is
    # a file search
    r"|\bwhich(?: (?!(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have)\b)[\w-]+){0,2} "
    # "file-like object" is a kind of object, not a file
    r"(?:files?|pages?|documents?|docs?|guides?)(?![\w-])(?! ?names?\b)"
    # … as does "In which file and under which name does the command look for the app?"
    rf"(?! (?:and (?:\w+ )?which [\w-]+ )?(?:{_AUXILIARY})\b(?![^?]*\b(?:{_DOCUMENTING})))"
    # "Which file are the messages written to?" asks for the file the example writes (log.txt)
    rf"(?!(?:(?<=file)|(?<=files)) (?:is|are|was|were)\b(?![^?]*\b(?:{_DOCUMENTING}|about)))"
    # "Which file makes the app directory a Python package?" asks what the file does (`__init__.py`); a file
    # that explains, covers, contains or has something is a search, and a page doing anything is ("compares")
    rf"(?!(?:(?<=file)|(?<=files)) (?!(?:{_AUXILIARY}|is|was|has)\b|{_DOCUMENTING}|contain|hold|give|provid|defin)"
    r"[a-z]+s\b)"
    r"|\bwhich section of the (?:docs|documentation)\b"
    r"|\bwhere (?:can|do|should|could) (?:i|we) (?:read|learn)(?: more)? about\b"
    r"|\bwhere (?:is|are) [\w\s`.-]{1,60}? (?:documented|explained|described|covered|discussed|introduced)\b"
    rf"|\bwhere (?:do|does) (?:the )?(?:docs|documentation|guides?|tutorials?|pages?) (?:{_DOCUMENTING})"
    r"|\b(?:is there|are there) (?:a |an |any )?(?:files?|pages?|documents?|docs|documentation|guides?|tutorials?) "
    r"(?:on|about|for|that)\b"
    r"|\b(?:point me to|take me to|where is|where's) (?:the |a )?(?:file|page|doc|docs|document|documentation|guide|"
    r"tutorial)\b"
    r"|\bwhat (?:file|page|doc|document|guide|tutorial)s? (?:should|do|can) (?:i|we) read\b"
    # "Where is the reference for the WebSocket class?": the reference is a page
    r"|\bwhere (?:is|are|can (?:i|we) find|do (?:i|we) find) (?:the )?(?:api )?reference(?: (?:docs|documentation|pages?))? (?:for|of|on)\b"
    r"|(?:参考文档|API ?参考)[^，。？?]{0,8}(?:在哪|哪里)"
    r"|\b(?:files?|pages?|documents?) (?:named|called|about|containing|that (?:mention|explain|document|describe|cover))\b"
    # "哪些成员可以读取文件名" asks for members, not files: a file's name (文件名) or folder is not a file search
    r"|(?:查找|寻找|找到|列出)[^，。？?]{0,12}(?:文件|文档|页面)(?![名夹])"
    # "ReDoc 需要哪个文件？" asks which file the software needs: a file (文件, not 文档/页面) is a document only when
    # the question says something documents it
    r"|(?:哪些|哪个|哪一个|哪一篇|哪篇)[^，。？?]{0,6}(?:文档|页面)(?![名夹])"
    rf"|(?:哪些|哪个|哪一个|哪一篇|哪篇)[^，。？?]{{0,6}}文件(?![名夹])(?=[^？?]*(?:{_ZH_DOCUMENTING}))"
    r"|有没有[^，。？?]{0,12}(?:文件|文档|页面|教程)(?![名夹])"
    r"|(?:在)?哪里(?:可以|能)?(?:找到|看到|查到|读到)[^，。？?]{0,12}(?:文件|文档|页面|说明|教程)(?![名夹])",
    re.I,
)


def route_by_rules(query: str) -> tuple[Route, str] | None:
    """(route, rule name) when a rule decides, else None."""
    if is_chitchat(query):
        return Route(query_type="chitchat", complexity="chitchat"), "greeting_or_thanks"
    for rule, pattern in (
        ("ticket_key", TICKET_RE),
        ("url", URL_RE),
        ("file_path", _PATH_RE),
        ("quoted_identifier", _QUOTED_RE),
        ("constant_identifier", _CONSTANT_RE),
    ):
        found = [f if isinstance(f, str) else next((g for g in f if g), "") for f in pattern.findall(query)]
        if found:
            keywords = list(dict.fromkeys(f.strip() for f in found if f.strip()))[:10]
            return Route(
                query_type="exact",
                complexity="simple",
                grep_keywords=keywords,
                suggested_tools=["grep_search", "hybrid_search"],
            ), rule
    if _FILE_DISCOVERY_RE.search(query):
        return Route(
            query_type="file_discovery", complexity="simple", suggested_tools=["grep_search", "hybrid_search"]
        ), "file_discovery"
    return None
