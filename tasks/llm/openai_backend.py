"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via `openai`."""

from __future__ import annotations

import os

from tasks.config import Settings
from tasks.llm.client import Completion, Message

__all__ = ["OpenAIBackend"]


class OpenAIBackend:
    name = "openai"

    def __init__(self, settings: Settings) -> None:
        import openai

        cfg = settings.llm
        base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = cfg.api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and not base_url:
            raise ValueError(
                "llm.backend=openai needs a key or an endpoint: set LILO_LLM__API_KEY "
                "(or OPENAI_API_KEY), LILO_LLM__BASE_URL for a self-hosted server, "
                "or use LILO_LLM__BACKEND=offline"
            )
        self.model = cfg.model
        self.base_url = base_url or "https://api.openai.com/v1"
        # The client retries 408/409/429/5xx and connection errors with backoff, honouring
        # Retry-After; lilo only sets how many times.
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or "not-needed",
            max_retries=cfg.retries,
            timeout=cfg.timeout_s,
        )

    def fingerprint(self) -> dict[str, object]:
        """Two servers may serve different weights under one model name."""
        return {"base_url": self.base_url}

    def complete(
        self, messages: list[Message], *, temperature: float, max_tokens: int
    ) -> Completion:
        response = self._client.chat.completions.create(
            model=self.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=temperature,
            max_tokens=max_tokens,
        )
        text = response.choices[0].message.content or ""
        usage = response.usage
        return Completion(
            text=text,
            tokens_in=usage.prompt_tokens if usage else 0,
            tokens_out=usage.completion_tokens if usage else 0,
        )
