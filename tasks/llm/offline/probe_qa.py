"""Offline handler: multi-document QA and its closed-book baseline (docs/design.md,
"Probes"). The prompt shows documents as `Document [i](Title: ...) text` lines and ends
with `Question: ...` / `Answer:` (lilo's template and the authors' alike). The answer is
the sentence of the documents, as the reader reads them, sharing the most key tokens with
the question (the earlier one on a tie), cut to 100 tokens; with no document, or none
sharing a key token, the engine does not know. It knows nothing beyond the prompt, so
closed-book questions go unanswered."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.client import Message
from lilo.tasks.llm.offline._overlap import key_tokens
from lilo.tasks.llm.offline._probe_reader import probe_reader
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.text import split_sentences

__all__ = ["NO_ANSWER", "matches", "respond"]

NO_ANSWER = "I don't know."
_MIN_SHARED = 1
_MAX_TOKENS = 100
_DOCUMENT = re.compile(r"^Document \[\d+\]\(Title: [^\n]*?\) ?(.*)$", re.M)
_QUESTION = re.compile(r"^Question: (.+)$", re.M)
_TOKEN = re.compile(r"\w+|[^\w\s]")


def matches(prompt: str) -> bool:
    return prompt.rstrip().endswith("\nAnswer:") and bool(_QUESTION.search(prompt))


# After every handler of lilo's own prompts (their signatures come first), before the bare
# task instruction.
@offline_reply("probe_qa", matches=matches, priority=5)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    question = key_tokens(_QUESTION.findall(prompt)[-1])
    read = probe_reader(prompt, offline)
    size = max(len(prompt), 1)
    scored = []
    for n, document in enumerate(_DOCUMENT.finditer(prompt)):
        offset = document.start(1)
        text = document.group(1)
        for sentence in split_sentences(text):
            at = text.find(sentence)
            if read((offset + max(at, 0)) / size, sentence):
                scored.append((len(question & key_tokens(sentence)), -n, -at, sentence))
    if not scored or max(scored)[0] < _MIN_SHARED:
        return NO_ANSWER
    return _bounded(max(scored)[3])


def _bounded(sentence: str) -> str:
    tokens = list(_TOKEN.finditer(sentence))
    return sentence if len(tokens) <= _MAX_TOKENS else sentence[: tokens[_MAX_TOKENS].start()]
