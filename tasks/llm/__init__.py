"""Language-model access: one client, one cache, pluggable backends (offline | openai)."""

from tasks.llm.client import (
    Backend,
    Completion,
    LLMClient,
    LLMError,
    Message,
    judge_settings,
    make_client,
    make_judge_client,
)

__all__ = [
    "Backend",
    "Completion",
    "LLMClient",
    "LLMError",
    "Message",
    "judge_settings",
    "make_client",
    "make_judge_client",
]
