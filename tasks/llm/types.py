"""The types a language-model call is made of, below the client and every backend: a
message, a completion, what a backend is, what an endpoint says about itself, and the
errors of a call that failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from lilo.tasks.errors import LiloError

__all__ = [
    "API",
    "Backend",
    "Completion",
    "COMPLETION_CUE",
    "CompletionPrompt",
    "ContextExceeded",
    "ContextRejected",
    "EndpointFacts",
    "LLMError",
    "Message",
    "ResponseFormatUnsupported",
    "as_completion",
]

Message = dict[str, str]
# How a request is sent: chat messages (`/v1/chat/completions`) or one text the model
# continues (`/v1/completions`), as a base model without a chat template is asked.
API = Literal["chat", "completions"]


class LLMError(LiloError):
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
class CompletionPrompt:
    """A completion request: the text the model continues and where its reply stops."""

    text: str
    stop: tuple[str, ...] = ()


# What ends a chat's messages rendered as one completion text (`as_completion`).
COMPLETION_CUE = "\n\nResponse:\n"


def as_completion(messages: list[Message]) -> CompletionPrompt:
    """The messages of a caller with no completion form of its own as one text: each
    message's content, a blank line between them, then `COMPLETION_CUE`; no stop."""
    return CompletionPrompt("\n\n".join(m.get("content", "") for m in messages) + COMPLETION_CUE)


@dataclass(frozen=True)
class EndpointFacts:
    """What an endpoint says about the model it serves, 0, "" or None where it does not
    say: its context window in tokens (prompt and reply together), the requests it computes
    at once, which tokenizer endpoint it offers (`tasks/llm/window.py`), whether the model
    has a chat template (llama-server's `/props` says: `llm.api = auto`), and who it is as
    far as it says (its model's id and date, its window, as JSON): a window learned from a
    server of another identity is not used."""

    window: int = 0
    slots: int = 0
    tokenizer: str = ""
    chat_template: bool | None = None
    identity: str = ""


class Backend(Protocol):
    name: str
    model: str

    def api(self) -> API:
        """How its requests are sent: `llm.api`, `auto` resolved (asked once per process)."""
        ...

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
        prompt: CompletionPrompt | None = None,
    ) -> Completion:
        """The reply; `max_tokens` None sends no limit (the server's own applies);
        `sending` is called before each request goes out (a retry is another request);
        `prompt` given (`api()` is completions), it is sent in place of `messages`."""
        ...
