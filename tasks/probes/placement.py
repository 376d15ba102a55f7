"""Where the gold item goes: taken out and inserted again at the asked index, everything
else keeping its order, as the authors' scripts do for both probes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["place_gold", "place_kv"]

T = TypeVar("T")


def place_kv(records: Sequence[Sequence[str]], key: str, index: int) -> list[tuple[str, str]]:
    """The records with the pair of `key` moved to `index` (0-based); the others keep
    their order. ValueError when the key is missing or the index is out of range."""
    pairs = [(str(k), str(v)) for k, v in records]
    at = [i for i, (k, _) in enumerate(pairs) if k == key]
    if len(at) != 1:
        raise ValueError(f"key {key} occurs {len(at)} times in the records, not once")
    if not 0 <= index < len(pairs):
        raise ValueError(f"position {index} is outside 0..{len(pairs) - 1}")
    gold = pairs.pop(at[0])
    pairs.insert(index, gold)
    return pairs


def place_gold(distractors: Sequence[T], gold: T, index: int) -> list[T]:
    """`gold` inserted at `index` among the distractors (0 .. len(distractors))."""
    if not 0 <= index <= len(distractors):
        raise ValueError(f"position {index} is outside 0..{len(distractors)}")
    documents = list(distractors)
    documents.insert(index, gold)
    return documents
