"""The engine's reply, computed in the calling thread: the first registered reply whose
`matches(prompt)` accepts the prompt answers it (tasks/llm/offline/base.py)."""

from __future__ import annotations

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline.base import offline_replies
from lilo.tasks.llm.types import Completion, Message
from lilo.tasks.tokens import count_word_tokens

__all__ = ["reply"]


def reply(messages: list[Message], offline: OfflineSettings) -> Completion:
    """The engine's reply to `messages`, computed in this thread."""
    prompt = "\n".join(m["content"] for m in messages)
    for handler in offline_replies():
        if handler.matches(prompt):
            text = handler.respond(messages, offline)
            break
    else:
        raise ValueError(
            "the offline engine does not know this prompt: register a reply for it with "
            "@offline_reply(name, matches=...) (tasks/llm/offline/base.py; docs/contributing.md), "
            "or use an OpenAI-compatible backend"
        )
    return Completion(
        text=text, tokens_in=count_word_tokens(prompt), tokens_out=count_word_tokens(text)
    )
