"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via `openai`."""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from lilo.tasks.backoff import BAD_REPLY
from lilo.tasks.config import Settings
from lilo.tasks.llm.types import Completion, Message, ResponseFormatUnsupported

__all__ = ["OpenAIBackend"]


@functools.cache
def _client(base_url: str, api_key: str, retries: int, timeout_s: float) -> Any:
    """One `openai.OpenAI` per endpoint and process: each new one sets up its connections
    again (TLS included, about 120 ms), and one is safe to share between threads."""
    import openai

    # It retries 408/409/429/5xx and connection errors with backoff, honouring Retry-After;
    # lilo only sets how many times.
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=retries, timeout=timeout_s)


class BadReply(RuntimeError):
    """A 200 whose body is no usable completion: cut-off or non-JSON body, no choices, or
    empty content. Asked again like a 5xx, since a well-behaved server never sends one."""


# Endpoints (base URL, model) that rejected `response_format` in this process: not asked again.
_NO_RESPONSE_FORMAT: set[tuple[str, str]] = set()


class OpenAIBackend:
    name = "openai"

    def __init__(self, settings: Settings) -> None:
        cfg = settings.llm
        base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = cfg.key()
        if not api_key and not base_url:
            raise ValueError(
                "llm.backend=openai needs a key or an endpoint: set LILO_LLM__API_KEY "
                "(or OPENAI_API_KEY), LILO_LLM__BASE_URL for a self-hosted server, "
                "or use LILO_LLM__BACKEND=offline"
            )
        self.model = cfg.model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.retries = cfg.retries
        self.weights = cfg.weights
        self._client = _client(self.base_url, api_key or "not-needed", cfg.retries, cfg.timeout_s)

    def fingerprint(self) -> dict[str, object]:
        """Two servers may serve different weights under one model name: the address, or
        what `llm.weights` names (a server started on a free port, flows/cli/_local_model.py)."""
        return {"weights": self.weights} if self.weights else {"base_url": self.base_url}

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        """The reply; a bad one (see `BadReply`) is asked for again up to `retries` times,
        waiting as `BAD_REPLY` says (0.5 s doubling, at most 8 s). An endpoint that rejects
        `response_format` raises ResponseFormatUnsupported, at once once it has rejected it
        in this process."""
        if response_format is not None and (self.base_url, self.model) in _NO_RESPONSE_FORMAT:
            raise ResponseFormatUnsupported(f"{self.base_url} rejected response_format before")
        for attempt in range(self.retries + 1):
            try:
                return self._complete(messages, temperature, max_tokens, response_format)
            except BadReply:
                if attempt == self.retries:
                    raise
                time.sleep(BAD_REPLY.wait_s(attempt))
        raise AssertionError("unreachable")

    def _complete(
        self,
        messages: list[Message],
        temperature: float,
        max_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        import openai

        options = {} if response_format is None else {"response_format": response_format}
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                max_tokens=max_tokens,
                **options,
            )
        except openai.BadRequestError as exc:
            if response_format is not None and _names_response_format(exc):
                _NO_RESPONSE_FORMAT.add((self.base_url, self.model))
                raise ResponseFormatUnsupported(str(exc)) from exc
            raise
        except (openai.APIResponseValidationError, ValueError) as exc:  # JSON cut short
            raise BadReply(f"unreadable reply: {exc}") from exc
        choices = getattr(response, "choices", None)
        if not choices:
            raise BadReply(f"no completion in the reply: {str(response)[:200]!r}")
        text = choices[0].message.content or ""
        if not text.strip():
            raise BadReply("empty reply")
        usage = response.usage
        return Completion(
            text=text,
            tokens_in=usage.prompt_tokens if usage else 0,
            tokens_out=usage.completion_tokens if usage else 0,
        )


def _names_response_format(exc: Exception) -> bool:
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text
