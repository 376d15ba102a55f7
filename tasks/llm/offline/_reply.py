"""The engine's reply, computed in the calling thread: the first registered reply whose
`matches(prompt)` accepts the prompt answers it (tasks/llm/offline/base.py). The prompt is
matched with the text inside the blocks that show another model's reply left out: a
judge's prompt holds a summary by whatever model generated it, and a summary that echoes
a planner's `<instruction>` must not make the judge's prompt look like a planner's."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.errors import InputError
from lilo.tasks.llm.offline.base import offline_replies
from lilo.tasks.llm.types import Completion, Message
from lilo.tasks.tokens import count_word_tokens

__all__ = ["reply"]

# The blocks of the judges' prompts that hold a model's reply: lilo's (tasks/prompt_packs/lilo/)
# and the benchmark's, whose QA answer shows the summary in a bare `<paper>`.
_REPLY_BLOCKS = re.compile(
    r"<(summary|response|response_a|response_b|predict|paper)>.*?</\1>", re.S
)


def reply(messages: list[Message], offline: OfflineSettings) -> Completion:
    """The engine's reply to `messages`, computed in this thread."""
    prompt = "\n".join(m["content"] for m in messages)
    routed = _REPLY_BLOCKS.sub(lambda m: f"<{m[1]}>\n…\n</{m[1]}>", prompt)
    for handler in offline_replies():
        if handler.matches(routed):
            text = handler.respond(messages, offline)
            break
    else:
        raise InputError(
            "the offline engine does not know this prompt: register a reply for it with "
            "@offline_reply(name, matches=...) (tasks/llm/offline/base.py; docs/contributing.md), "
            "or use an OpenAI-compatible backend"
        )
    return Completion(
        text=text, tokens_in=count_word_tokens(prompt), tokens_out=count_word_tokens(text)
    )
