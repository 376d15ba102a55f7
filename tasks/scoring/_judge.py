"""What the LLM judges share: the score tiers of docs/design.md §8 and their strict parsing."""

from __future__ import annotations

from typing import Any

from lilo.tasks.qa.parse import QAFormatError

__all__ = ["TIERS", "tier_value"]

TIERS = (0.0, 0.25, 0.5, 0.75, 1.0)


def tier_value(value: Any) -> float:
    """A judge's score, which must be one of the tiers: no snapping, a miss is an error. A
    tier written as a string ("0.75", as the benchmark's own example output shows) counts."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, int | float) or value not in TIERS:
        raise QAFormatError(f"score must be one of 0, 0.25, 0.5, 0.75, 1; got {value!r}")
    return float(value)
