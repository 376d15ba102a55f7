"""What lilo takes from an endpoint's reply, or from its own cache, only once checked: token
counts (a server may report NaN, Infinity, 1e30 or -5) and cache entries (one written by an
older lilo from such a reply, or damaged on disk)."""

from __future__ import annotations

import logging
import math
from typing import Any

from lilo.tasks.cache import DiskCache
from lilo.tasks.llm.types import Completion

__all__ = ["MOST_TOKENS", "cached_completion", "usage_counts"]

log = logging.getLogger(__name__)

# More tokens than any model reads or writes in one call, and within the warehouse's INTEGER.
MOST_TOKENS = 100_000_000


def _count(value: Any) -> int | None:
    """`value` as a token count: a whole number from 0 to MOST_TOKENS; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value != int(value) or not 0 <= value <= MOST_TOKENS:
        return None
    return int(value)


def usage_counts(usage: Any, where: str) -> tuple[int, int]:
    """Prompt and completion tokens of a reply's `usage`, 0 where it has none. A count that
    is no token count (see `_count`) is unknown: recorded as 0, with a warning."""
    if usage is None:
        return 0, 0
    counts = []
    for name in ("prompt_tokens", "completion_tokens"):
        value = getattr(usage, name, None)
        count = _count(value)
        if count is None:
            log.warning("%s reported %s=%.40r, no token count: recorded as 0", where, name, value)
        counts.append(count or 0)
    return counts[0], counts[1]


def cached_completion(
    cache: DiskCache, key: str, max_bytes: int
) -> tuple[Completion, float] | None:
    """The completion and latency cached under `key`; None when there is none or it cannot
    be trusted (larger than `max_bytes`, not the shape lilo writes, counts no model reports):
    a miss, so the call is made again and its entry replaced."""
    entry = cache.get_json(key, max_bytes)
    if entry is None:
        return None
    if isinstance(entry, dict):
        text, latency = entry.get("text"), entry.get("latency_s")
        tokens = [_count(entry.get(name)) for name in ("tokens_in", "tokens_out")]
        # Entries written before `finish_reason` was kept: "stop".
        finish = entry.get("finish_reason", "stop")
        if (
            isinstance(text, str)
            and None not in tokens
            and isinstance(latency, int | float)
            and math.isfinite(latency)
            and latency >= 0
            and isinstance(finish, str)
        ):
            redacted = entry.get("redacted", 0)  # entries written before it was kept: 0
            redacted = redacted if isinstance(redacted, int) else 0
            completion = Completion(text, tokens[0] or 0, tokens[1] or 0, finish, redacted)
            return completion, float(latency)
    log.warning("cache entry %s is not a completion lilo wrote: made again", key)
    return None
