"""The LLM requests of this process under way, for the progress line (flows/_progress.py):
how many are in flight and the reply tokens they have streamed so far. A request's tokens
leave these counts when it ends; the stage report counts them from then on, from the call
log. Requests in other processes (a Dask worker's) are not seen here."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["LIVE", "Live"]


class Live:
    """Counts of the requests in flight; safe from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.tokens = 0  # reply tokens (streamed chunks) of the requests in flight

    @contextmanager
    def request(self) -> Iterator[Callable[[int], None]]:
        """One request in flight while the block runs; it calls what it is given with each
        reply token count it receives."""
        mine = 0

        def received(tokens: int) -> None:
            nonlocal mine
            mine += tokens
            with self._lock:
                self.tokens += tokens

        with self._lock:
            self.in_flight += 1
        try:
            yield received
        finally:
            with self._lock:
                self.in_flight -= 1
                self.tokens -= mine


LIVE = Live()
