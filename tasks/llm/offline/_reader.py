"""How the offline engine reads a prompt (docs/design.md §9): a property of the reader, applied to
every prompt the same way.

With `middle_neglect` on, a long prompt's middle is read less: a sentence at relative
position x of the prompt is taken in when the hash of its text, a number u in [0, 1), is
under w(x) = 1 - neglect * (1 - |2x - 1|) (1 at both ends, 1 - neglect mid-way), so over
many sentences a share w(x) is read. The same prompt is always read the same way, and a
sentence has one u wherever it stands: repeated nearer the end (RAL-Writer's restatement)
it is read there when u is under w at that place too, which holds for every sentence only
at the prompt's very end. Prompts under `neglect_min_words` words are read in full.
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
