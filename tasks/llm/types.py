"""The types a language-model call is made of, below the client and every backend: a
message, a completion, what a backend is, and the error of a call that failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lilo.tasks.errors import LiloError

__all__ = ["Backend", "Completion", "LLMError", "Message", "ResponseFormatUnsupported"]

Message = dict[str, str]


class LLMError(LiloError, RuntimeError):
    """A call that failed after the backend's retries."""


class ResponseFormatUnsupported(LLMError):
    """The endpoint rejected `response_format` (a 400 naming it or its JSON schema): the
    caller falls back to asking for free JSON in the prompt (tasks/scoring/consistency.py)."""


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int


class Backend(Protocol):
    name: str
    model: str

    def fingerprint(self) -> dict[str, object]:
        """What, beyond model and messages, changes this backend's output."""
        ...

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int,
        response_format: dict[str, Any] | None = None,
    ) -> Completion: ...
