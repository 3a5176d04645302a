"""Any OpenAI-compatible chat API (OpenAI, vLLM, Ollama, llama.cpp server, DeepSeek, Qwen...)."""

from __future__ import annotations

from collections.abc import Iterator

from kb_agent.llm.base import LLM, Completion, LLMError, Message


class OpenAIChat(LLM):
    supports_tools = True

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.1,
    ):
        super().__init__()
        import openai

        self._openai = openai
        self.model = model
        self._temperature = temperature
        # the SDK retries 408/409/429/5xx with exponential backoff and honours Retry-After
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=max_retries
        )

    def _request(self, messages: list[Message], options: dict) -> dict:
        request: dict = {
            "model": self.model,
            "messages": messages,
            "temperature": options.get("temperature", self._temperature),
        }
        if options.get("max_tokens"):
            request["max_tokens"] = options["max_tokens"]
        if options.get("stop"):
            request["stop"] = options["stop"]
        if options.get("json_schema") is not None:
            request["response_format"] = {"type": "json_object"}
        if options.get("tools"):
            request["tools"] = options["tools"]
        return request

    def _complete(self, messages: list[Message], **options) -> Completion:
        try:
            response = self._client.chat.completions.create(**self._request(messages, options))
        except self._openai.OpenAIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
        choice = response.choices[0].message
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in (choice.tool_calls or [])
        ]
        usage = response.usage
        return Completion(
            text=choice.content or "",
            tool_calls=calls,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        try:
            stream = self._client.chat.completions.create(**self._request(messages, options), stream=True)
            for event in stream:
                if event.choices and event.choices[0].delta.content:
                    yield event.choices[0].delta.content
        except self._openai.OpenAIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
