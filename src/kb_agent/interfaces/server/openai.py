"""`/v1/chat/completions`: the OpenAI chat API, so any OpenAI client or chat UI can talk to kb-agent.
`kb_mode: false` is the UI's plain chat mode: the model alone, through the same gate, budget and filter."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from kb_agent.governance.identity import UserContext
from kb_agent.interfaces.server.deps import Services, caller, error, services

router = APIRouter()


class ContentPart(BaseModel):
    """An OpenAI content part; only text parts carry words for kb-agent (images and the like are ignored)."""

    type: str = "text"
    text: str = ""


class ChatMessage(BaseModel):
    role: str
    content: str | list[ContentPart] | None = ""


class ChatRequest(BaseModel):
    model: str = "kb-agent"
    messages: list[ChatMessage] = Field(min_length=1, max_length=100)
    stream: bool = False
    kb_mode: bool = Field(default=True, description="false = plain chat with the model, no documents")


def _text(content: str | list[ContentPart] | None) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(p.text for p in content if p.type == "text")
    return content or ""


@router.post("/v1/chat/completions")
def chat_completions(body: ChatRequest, who: UserContext = Depends(caller), svc: Services = Depends(services)):
    engine = svc.engine
    turns = [{"role": m.role, "content": _text(m.content)} for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1]["role"] != "user":
        return error(400, "the last message must come from the user")
    question, history = turns[-1]["content"], turns[:-1]
    completion = Completion(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), body.model)
    if not body.kb_mode:
        if not body.stream:
            return completion.message(engine.chat(question, user=who, history=history), [])
        return StreamingResponse(
            completion.chunks(engine.chat_stream(question, user=who, history=history)),
            media_type="text/event-stream",
        )
    if not body.stream:
        answer = engine.answer_query(question, user=who, history=history)
        svc.count_answer(answer.refused)
        return completion.message(answer.answer, [c.model_dump() for c in answer.citations], answer.tokens)
    stream = engine.stream(question, user=who, history=history)  # denials raise here: a 403, not a 200
    return StreamingResponse(completion.chunks(stream), media_type="text/event-stream")


class Completion:
    """The OpenAI chat.completion / chat.completion.chunk shapes."""

    def __init__(self, completion_id: str, created: int, model: str):
        self.id, self.created, self.model = completion_id, created, model

    def message(self, content: str, citations: list[dict], tokens: dict | None = None) -> dict:
        tokens = tokens or {}
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": tokens.get("prompt", 0),
                "completion_tokens": tokens.get("completion", 0),
                "total_tokens": sum(tokens.values()),
            },
            "citations": citations,
        }

    def _chunk(self, delta: dict, finish: str | None = None, **extra) -> str:
        data = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    def chunks(self, events: Iterator[dict]) -> Iterator[str]:
        yield self._chunk({"role": "assistant"})
        streamed = False
        for event in events:
            if event["type"] == "token":
                streamed = True
                yield self._chunk({"content": event["text"]})
            elif event["type"] == "final" and "answer" in event:
                answer = event["answer"]
                if not streamed:
                    yield self._chunk({"content": answer.answer})
                else:  # the checked answer may differ from the raw tokens: send the references
                    footer = answer.answer.split("\n\nReferences:\n", 1)
                    if len(footer) == 2:
                        yield self._chunk({"content": "\n\nReferences:\n" + footer[1]})
                yield self._chunk({}, "stop", citations=[c.model_dump() for c in answer.citations])
            elif event["type"] == "final":
                yield self._chunk({}, "stop", citations=[])
            elif event["type"] == "error":
                yield self._chunk({"content": f"[error: {event['error']}]"}, "stop")
        yield "data: [DONE]\n\n"
