"""Any OpenAI-compatible chat API (OpenAI, vLLM, Ollama, llama.cpp server, DeepSeek, Qwen...)."""

from __future__ import annotations

from collections.abc import Iterator

from kb_agent.llm.base import LLM, Completion, LLMError, Message
from kb_agent.llm.deadline import call_with_deadline, iterate_with_deadline


class OpenAIChat(LLM):
    supports_tools = True
    abandonable = True

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.1,
        seed: int = -1,
    ):
        super().__init__()
        import openai

        self._openai = openai
        self.model = model
        self._temperature = temperature
        self._seed = seed
        self._deadline_s = timeout_s * (max_retries + 1)  # the whole call, retries and a trickling stream included
        # the SDK retries 408/409/429/5xx with exponential backoff and honours Retry-After
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=max_retries
        )

    def _seconds(self, options: dict) -> float:
        """The call's own deadline, or less when the answer's budget (`deadline_s`, MeteredLLM) runs out first."""
        return min(self._deadline_s, options.get("deadline_s") or self._deadline_s)

    def _request(self, messages: list[Message], options: dict) -> dict:
        request: dict = {
            "model": self.model,
            "messages": messages,
            "temperature": options.get("temperature", self._temperature),
        }
        if self._seed >= 0:  # OpenAI, vLLM, llama-server and Ollama honour it; it makes sampling repeatable
            request["seed"] = self._seed
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
        request = self._request(messages, options)
        try:
            response = call_with_deadline(
                lambda: self._client.chat.completions.create(**request), self._seconds(options), self.model
            )
        except self._openai.OpenAIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # a 200 whose body is not JSON
            raise LLMError(f"the endpoint's reply is not a chat completion ({exc})") from exc
        try:
            choice = response.choices[0].message
            calls = [
                {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                for c in (choice.tool_calls or [])
            ]
        except (AttributeError, IndexError, TypeError, KeyError) as exc:  # 200 without `choices`, or not JSON
            raise LLMError(f"the endpoint's reply is not a chat completion: {str(response)[:200]!r}") from exc
        usage = getattr(response, "usage", None)
        return Completion(
            text=choice.content or "",
            tool_calls=calls,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _stream(self, messages: list[Message], **options) -> Iterator[str]:
        request = self._request(messages, options)

        def pieces() -> Iterator[str]:
            for event in self._client.chat.completions.create(**request, stream=True):
                choices = getattr(event, "choices", None)
                if choices and choices[0].delta.content:
                    yield choices[0].delta.content

        try:
            yield from iterate_with_deadline(pieces, self._seconds(options), self.model)
        except self._openai.OpenAIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
        except (ValueError, AttributeError, TypeError) as exc:  # a stream that is not OpenAI chunks
            raise LLMError(f"the endpoint's stream is not chat-completion chunks ({exc})") from exc
