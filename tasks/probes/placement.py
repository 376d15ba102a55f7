"""Where the gold item goes: taken out and inserted again at the asked index, everything
else keeping its order, as the authors' scripts do for both probes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["PAPER_POSITIONS", "default_positions", "place_gold", "place_kv"]

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


# The gold positions the authors ran (0-based): KV 140 keys; MDQA 10, 20, 30 documents.
# lilo's defaults for 75 and 300 keys follow the same spacing.
PAPER_POSITIONS = {
    ("kv", 75): (0, 24, 49, 74),
    ("kv", 140): (0, 34, 69, 104, 139),
    ("kv", 300): (0, 49, 99, 149, 199, 249, 299),
    ("mdqa", 10): (0, 4, 9),
    ("mdqa", 20): (0, 4, 9, 14, 19),
    ("mdqa", 30): (0, 4, 9, 14, 19, 24, 29),
}


def default_positions(task: str, size: int) -> tuple[int, ...]:
    """The paper's positions for its sizes; for any other size the first index, the last,
    and the ends of the first three quarters (0, k/4 - 1, k/2 - 1, 3k/4 - 1, k - 1)."""
    if (task, size) in PAPER_POSITIONS:
        return PAPER_POSITIONS[(task, size)]
    quarters = {max(0, round(size * q / 4) - 1) for q in (1, 2, 3)}
    return tuple(sorted({0, size - 1} | quarters))
