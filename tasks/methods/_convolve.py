"""LongScope's convolution step (docs/design.md §15), pure: sample sets of `kernel_width` edits with
probability proportional to their judge score, and keep the top-k edits by score."""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["sample_sets", "top_k"]


def sample_sets(
    scores: Sequence[float], kernel_width: int, sets: int, seed: int
) -> list[list[int]]:
    """`sets` sets of distinct edit indices, each drawn without replacement in proportion to
    score (a score of 0 weighs as 1e-6 so a set can always be filled); deterministic for a
    seed. A set holds min(kernel_width, number of edits) indices, sorted."""
    rng = random.Random(seed)
    width = min(kernel_width, len(scores))
    out = []
    for _ in range(sets):
        pool = list(range(len(scores)))
        chosen = []
        for _ in range(width):
            weights = [max(scores[i], 1e-6) for i in pool]
            pick = rng.choices(pool, weights=weights)[0]
            pool.remove(pick)
            chosen.append(pick)
        out.append(sorted(chosen))
    return out


def top_k(scores: Sequence[float], k: int) -> list[int]:
    """Indices of the k best scores, best first; ties go to the earlier edit."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: max(k, 0)]
