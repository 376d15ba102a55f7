"""Offline handler: the consistency judge's answer (DESIGN §8, §9 "answers by retrieval from
the summary"): the 1-3 summary sentences sharing most key tokens with the question."""

from __future__ import annotations

from tasks.config import Settings
from tasks.llm.client import Message
from tasks.llm.offline._overlap import between, key_tokens
from tasks.text import split_sentences

__all__ = ["NO_ANSWER", "SIGNATURE", "respond"]

SIGNATURE = "Answer the question from the summary alone"
NO_ANSWER = "The text does not say."

_MAX_SENTENCES = 3
# A sentence must share this many key tokens with the question, and at least this share
# of the best sentence's overlap, to be part of the answer.
_MIN_SHARED = 2
_SHARE_OF_BEST = 0.5


def respond(messages: list[Message], settings: Settings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    question = key_tokens(between(prompt, "question"))
    sentences = [
        s for line in between(prompt, "summary").splitlines() for s in split_sentences(line)
    ]
    scored = sorted(
        ((len(question & key_tokens(s)), -i, s) for i, s in enumerate(sentences)), reverse=True
    )
    if not scored or scored[0][0] < _MIN_SHARED:
        return NO_ANSWER
    floor = max(_MIN_SHARED, _SHARE_OF_BEST * scored[0][0])
    return " ".join(s for shared, _, s in scored[:_MAX_SENTENCES] if shared >= floor)
