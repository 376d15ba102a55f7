"""The engine's reply, computed in the calling thread: the first handler module of this
package whose `matches(prompt)` accepts the prompt answers it (see the package's docstring)."""

from __future__ import annotations

import functools
from types import ModuleType

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.types import Completion, Message
from lilo.tasks.registry import import_modules
from lilo.tasks.tokens import count_word_tokens

__all__ = ["reply"]


@functools.cache
def _handlers() -> list[ModuleType]:
    modules = import_modules(__package__)
    handlers = [m for m in modules if hasattr(m, "matches") and hasattr(m, "respond")]
    return sorted(handlers, key=lambda m: getattr(m, "PRIORITY", 0))


def reply(messages: list[Message], offline: OfflineSettings) -> Completion:
    """The engine's reply to `messages`, computed in this thread."""
    prompt = "\n".join(m["content"] for m in messages)
    for handler in _handlers():
        if handler.matches(prompt):
            text = handler.respond(messages, offline)
            break
    else:
        raise ValueError(
            "the offline engine does not know this prompt: add a handler in "
            "tasks/llm/offline/ whose matches() accepts it, or use an "
            "OpenAI-compatible backend"
        )
    return Completion(
        text=text, tokens_in=count_word_tokens(prompt), tokens_out=count_word_tokens(text)
    )
