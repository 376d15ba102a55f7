"""Exponential backoff, one way for every retry loop in lilo: waits that double from a first
wait up to a cap. The named policies are the ones lilo uses; arXiv's first wait is a
setting (`arxiv.backoff_s`).

The network retry loops (the LLM/embedding client, arXiv) wait `jittered_s`: full jitter, a
wait drawn uniformly in [0, wait_s(attempt)], so threads refused together do not come back
together; a server's Retry-After is a floor jitter never goes under. `WAREHOUSE_LOCK` and
`TITLE_SEARCH` keep `wait_s`: the lock's waiters are a few processes of one machine whose
short transactions already end at different instants, and a title search's retry is a due
date recorded in the warehouse, where a drawn wait would make a run's record depend on a
random draw and no herd of clients meets it."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

__all__ = ["BAD_REPLY", "TITLE_SEARCH", "WAREHOUSE_LOCK", "Backoff"]


@dataclass(frozen=True)
class Backoff:
    first_s: float
    cap_s: float = math.inf

    def wait_s(self, attempt: int) -> float:
        """The wait after failed attempt `attempt` (0 for the first)."""
        return min(self.first_s * 2**attempt, self.cap_s)

    def jittered_s(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: a wait drawn by `rng` uniformly in [0, wait_s(attempt)]."""
        return rng.uniform(0.0, self.wait_s(attempt))


# A 200 from a chat endpoint that holds no usable completion, asked for again.
BAD_REPLY = Backoff(first_s=0.5, cap_s=8.0)
# Another process holds the warehouse file; short write transactions take turns.
WAREHOUSE_LOCK = Backoff(first_s=0.05, cap_s=2.0)
# A reference whose title search failed, tried again by a later run: 6 hours, at most a week.
TITLE_SEARCH = Backoff(first_s=6 * 3600.0, cap_s=7 * 24 * 3600.0)
