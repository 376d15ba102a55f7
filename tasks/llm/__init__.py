"""Language-model access: one client, one cache, pluggable backends (offline | openai)."""

from lilo.tasks.llm.client import LLMClient, judge_settings, make_client, make_judge_client
from lilo.tasks.llm.types import (
    Backend,
    Completion,
    ContextExceeded,
    LLMError,
    Message,
    ResponseFormatUnsupported,
)

__all__ = [
    "Backend",
    "Completion",
    "ContextExceeded",
    "LLMClient",
    "LLMError",
    "Message",
    "ResponseFormatUnsupported",
    "judge_settings",
    "make_client",
    "make_judge_client",
]
