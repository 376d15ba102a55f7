"""The engine's reply, computed in the calling thread: the first handler module of this
package whose `matches(prompt)` accepts the prompt answers it (see the package's docstring)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

from tasks.config import Settings
from tasks.llm.types import Completion, Message
from tasks.tokens import count_word_tokens

__all__ = ["reply"]


@functools.cache
def _handlers() -> list[ModuleType]:
    modules = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not info.name.startswith("_"):
            modules.append(importlib.import_module(f"{__package__}.{info.name}"))
    handlers = [m for m in modules if hasattr(m, "matches") and hasattr(m, "respond")]
    return sorted(handlers, key=lambda m: getattr(m, "PRIORITY", 0))


def reply(messages: list[Message], settings: Settings) -> Completion:
    """The engine's reply to `messages`, computed in this thread."""
    prompt = "\n".join(m["content"] for m in messages)
    for handler in _handlers():
        if handler.matches(prompt):
            text = handler.respond(messages, settings)
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
