"""The probes' accuracy, as the authors' repository scores it (docs/reference.md, "Lost in
the Middle probes").

Multi-document QA: the prediction's first line, normalized as the SQuAD evaluation script
normalizes (lower case, punctuation removed, the articles a/an/the removed, whitespace
collapsed), is correct when any gold answer, normalized the same way, is a substring of
it. Key-value retrieval: correct when the value, lower-cased, is a substring of the
lower-cased prediction (no normalization: a UUID has no articles, and its hyphens are
part of it)."""

from __future__ import annotations

import string
from collections.abc import Iterable

import regex

__all__ = ["kv_correct", "normalize_answer", "qa_correct"]

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
