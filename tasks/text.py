"""Text measures shared by every stage: one word rule everywhere (docs/design.md §8)."""

from __future__ import annotations

import re

__all__ = ["count_words", "counted", "split_sentences", "words"]

# The reference scorer's rule: alphabetic tokens, inner apostrophes or hyphens join a word,
# numbers are not words.
WORD_RE = re.compile(r"\b(?!\d+\b)[a-zA-Z]+(?:['’-][a-zA-Z]+)*\b")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\\$(])")


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


def count_words(text: str) -> int:
    return len(WORD_RE.findall(text))


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


def counted(n: int, noun: str) -> str:
    """`1 survey`, `3 surveys`: a count and its noun, as a message prints them."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
