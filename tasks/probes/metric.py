"""The probes' accuracy, as the authors' repository scores it (docs/reference.md, "Lost in
the Middle probes").

Multi-document QA: the prediction's first line, normalized as the SQuAD evaluation script
normalizes (lower case, punctuation removed, the articles a/an/the removed, whitespace
collapsed), is correct when any gold answer, normalized the same way, is a substring of
it. Key-value retrieval: correct when the value, lower-cased, is a substring of the
lower-cased prediction (no normalization: a UUID has no articles, and its hyphens are
part of it).

Beside the authors' metric, lilo records whether a reply echoes its prompt (`echoes_prompt`,
docs/design.md §17): a model that copies the prompt until its token budget runs out can
contain the gold item without having retrieved it."""

from __future__ import annotations

import string
from collections.abc import Iterable

import regex

__all__ = ["ECHO_TOKENS", "echoes_prompt", "kv_correct", "normalize_answer", "qa_correct"]

# The shortest opening span, in whitespace-separated tokens, that makes a reply an echo: a
# KV answer (a UUID, or `"key": "value"`) is one or two tokens, a short QA answer a few.
ECHO_TOKENS = 8
_PUNCTUATION = frozenset(string.punctuation)
# `regex`, as the authors: its word boundaries count combining marks as part of a word
_ARTICLES = regex.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower case, ASCII punctuation removed, then the articles, then runs of whitespace
    made one space. Non-ASCII letters and punctuation (é, ö, the en dash) are kept, as the
    SQuAD script keeps them."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def qa_correct(prediction: str, answers: Iterable[str]) -> bool:
    """Any normalized gold answer within the normalized first line of the prediction (the
    first line only: a model that copies its context cannot game the metric)."""
    first = prediction.split("\n")[0].strip()
    normalized = normalize_answer(first)
    return any(normalize_answer(a) in normalized for a in answers)


def kv_correct(prediction: str, value: str) -> bool:
    return value.lower() in prediction.lower()


def echoes_prompt(prediction: str, prompt: str) -> bool | None:
    """Whether the reply echoes the prompt: its first `ECHO_TOKENS` whitespace-separated
    tokens are, verbatim, consecutive tokens of the prompt (both whitespace-normalized, case
    kept). None for an empty reply; False for one shorter than `ECHO_TOKENS` tokens."""
    tokens = prediction.split()
    if not tokens:
        return None
    if len(tokens) < ECHO_TOKENS:
        return False
    return f" {' '.join(tokens[:ECHO_TOKENS])} " in f" {' '.join(prompt.split())} "
