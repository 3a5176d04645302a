"""A scripted LLM double: replies come from a list or a function of the messages. For tests and demos
of the graph's logic; every call is recorded so tests can assert how many calls each path makes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from kb_agent.llm.base import LLM, Completion, LLMError, Message

Reply = str | Exception | Callable[[list[Message]], str]


class ScriptedLLM(LLM):
    model = "scripted"

    def __init__(
        self,
        replies: list[Reply] | Callable[[list[Message]], str],
        *,
        delay_s: float = 0.0,
        supports_tools: bool = False,
    ):
        super().__init__()
        self._replies = replies
        self._delay = delay_s
        self.supports_tools = supports_tools
        self.prompts: list[list[Message]] = []

    def _next(self, messages: list[Message]) -> str:
        self.prompts.append(messages)
        if self._delay:
            time.sleep(self._delay)
        if callable(self._replies):
            reply: Reply = self._replies(messages)
        elif not self._replies:
            raise LLMError("scripted LLM has no reply left")
        else:
            reply = self._replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(messages)
        return reply

    def _complete(self, messages: list[Message], **options) -> Completion:
        text = self._next(messages)
        prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=max(1, len(text) // 4))

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        text = self._next(messages)
        for start in range(0, len(text), 8):
            yield text[start : start + 8]
