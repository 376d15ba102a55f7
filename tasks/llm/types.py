"""The types a language-model call is made of, below the client and every backend: a
message, a completion, what a backend is, what an endpoint says about itself, and the
errors of a call that failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from lilo.tasks.errors import LiloError

__all__ = [
    "Backend",
    "Completion",
    "ContextExceeded",
    "ContextRejected",
    "EndpointFacts",
    "LLMError",
    "Message",
    "ResponseFormatUnsupported",
]

Message = dict[str, str]


class LLMError(LiloError, RuntimeError):
    """A call that failed after the backend's retries."""


class ResponseFormatUnsupported(LLMError):
    """The endpoint rejected `response_format` (a 400 naming it or its JSON schema): the
    caller falls back to asking for free JSON in the prompt (tasks/qa/parse.py)."""


class ContextExceeded(LLMError):
    """A prompt that cannot fit the endpoint's context window: recorded as the failure
    `context_exceeded`, without a call once the window is known."""


class ContextRejected(LLMError):
    """The endpoint answered 400 "maximum context length is N tokens": `window` is N, and
    `prompt` the prompt's tokens where the message says (0 where it does not)."""

    def __init__(self, message: str, window: int, prompt: int = 0) -> None:
        super().__init__(message)
        self.window, self.prompt = window, prompt


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    # Why the reply ended: "stop" (the model ended it), "length" (cut at its budget).
    finish_reason: str = "stop"
    # Configured secrets replaced in `text` by `[redacted]` as the reply came in.
    redacted: int = 0

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class EndpointFacts:
    """What an endpoint says about the model it serves, 0 or "" where it does not say:
    its context window in tokens (prompt and reply together), the requests it computes at
    once, and which tokenizer endpoint it offers (`tasks/llm/window.py`)."""

    window: int = 0
    slots: int = 0
    tokenizer: str = ""


class Backend(Protocol):
    name: str
    model: str

    def fingerprint(self) -> dict[str, object]:
        """What, beyond model and messages, changes this backend's output."""
        ...

    def facts(self) -> EndpointFacts:
        """What the endpoint says about itself (asked once per process and model)."""
        ...

    def count_tokens(self, messages: list[Message], tokenizer: str) -> int | None:
        """The prompt's tokens as the endpoint's `tokenizer` counts them; None where it
        cannot."""
        ...

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None = None,
        sending: Callable[[], None] | None = None,
    ) -> Completion:
        """The reply; `max_tokens` None sends no limit (the server's own applies);
        `sending` is called before each request goes out (a retry is another request)."""
        ...
