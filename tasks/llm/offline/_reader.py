"""How the offline engine reads a prompt (docs/design.md §9): a property of the reader, applied to
every prompt the same way.

With `middle_neglect` on, a long prompt's middle is read less: a sentence at relative
position x of the prompt is taken in with probability w(x) = 1 - neglect * (1 - |2x - 1|)
(1 at both ends, 1 - neglect mid-way). Which sentences are taken in is decided by a hash of
the sentence, so the same prompt is always read the same way, and a sentence repeated near
the end of a prompt (RAL-Writer's restatement) is read there even when its first place in
the middle was skipped. Prompts under `neglect_min_words` words are read in full.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from lilo.tasks.config import OfflineSettings
from lilo.tasks.text import count_words

__all__ = ["Reader", "reader", "weight"]

Reader = Callable[[float, str], bool]  # (relative position in the prompt, sentence) -> read?


def weight(x: float, neglect: float) -> float:
    """The probability of reading what sits at relative position x (0..1)."""
    return 1.0 - neglect * (1.0 - abs(2.0 * x - 1.0))


def _unit(text: str) -> float:
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def reader(prompt: str, offline: OfflineSettings) -> Reader:
    if offline.middle_neglect <= 0 or count_words(prompt) < offline.neglect_min_words:
        return lambda x, text: True
    neglect = offline.middle_neglect
    return lambda x, text: _unit(text) < weight(x, neglect)
