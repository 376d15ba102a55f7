"""Offline handler: the QA answer (docs/design.md §8, §9 "answers by retrieval from the summary").

The prompt shows a text (`<summary>` in lilo's template, `<paper>` in the benchmark's) and
a `<question>`; the answer is the text's sentence sharing most key tokens with the
question, bounded to 200 characters as both templates ask, or "I don't know"."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import key_tokens
from lilo.tasks.llm.offline._reader import reader
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message
from lilo.tasks.text import split_sentences

__all__ = ["NO_ANSWER", "matches", "respond"]

NO_ANSWER = "I don't know"

MAX_CHARS = 200
# A sentence must share this many key tokens with the question to answer it.
_MIN_SHARED = 2
_TEXT_RE = re.compile(r"<(summary|paper)>\n?(.*?)\n?</\1>", re.S)


def matches(prompt: str) -> bool:
    return "<question>" in prompt and "<gold>" not in prompt and bool(_TEXT_RE.search(prompt))


@offline_reply("answer", matches=matches, priority=1)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    found = list(_TEXT_RE.finditer(prompt))[-1]
    question = key_tokens(re.findall(r"<question>(.*?)</question>", prompt, re.S)[-1])
    read = reader(prompt, offline)
    size, scored = max(len(prompt), 1), []
    offset = found.start(2)
    for i, line in enumerate(found.group(2).splitlines(keepends=True)):
        for sentence in split_sentences(line):
            if read(offset / size, sentence):
                scored.append((len(question & key_tokens(sentence)), -i, sentence))
        offset += len(line)
    if not scored or max(scored)[0] < _MIN_SHARED:
        return NO_ANSWER
    return _bounded(max(scored)[2])


def _bounded(sentence: str) -> str:
    if len(sentence) <= MAX_CHARS:
        return sentence
    return sentence[: MAX_CHARS - 3].rsplit(" ", 1)[0] + "..."
