"""The LLM calls of this process as they go, for the progress line (flows/_progress.py): the
calls ended (made or cached) with the tokens of those made, the requests in flight and the
reply tokens they have streamed so far; the texts being embedded and those embedded. The
LLM client (tasks/llm/client.py) counts a call when it starts and when it ends, so the line
moves inside a unit of many calls, before the stage writer reads them from the call log.
Calls in other processes (a Dask worker's) are not seen here: the stage report counts
those, from the call log."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["LIVE", "Ended", "Live"]


@dataclass(frozen=True)
class Ended:
    """Counts of the calls ended: made, served from the cache, tokens (in and out) made."""

    made: int = 0
    cached: int = 0
    tokens: int = 0

    def __sub__(self, other: Ended) -> Ended:
        return Ended(self.made - other.made, self.cached - other.cached, self.tokens - other.tokens)


class Live:
    """Counts of the calls in flight and ended; safe from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.tokens = 0  # reply tokens (streamed chunks) of the requests in flight
        self.embedding = 0  # texts being embedded now (tasks/embeddings.py)
        self.embedded = 0  # texts embedded so far (a stage takes the difference)
        self._ended = Ended()

    @contextmanager
    def call(self) -> Iterator[None]:
        """One request in flight while the block runs (its retries included)."""
        with self._lock:
            self.in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    @contextmanager
    def embeddings(self, texts: int) -> Iterator[None]:
        """`texts` being embedded while the block runs; embedded once it ends without error."""
        with self._lock:
            self.embedding += texts
        try:
            yield
        finally:
            with self._lock:
                self.embedding -= texts
        with self._lock:
            self.embedded += texts

    @contextmanager
    def streaming(self) -> Iterator[Callable[[int], None]]:
        """A request's streamed reply tokens, counted while the block runs: it calls what it
        is given with each reply token count it receives."""
        mine = 0

        def received(tokens: int) -> None:
            nonlocal mine
            mine += tokens
            with self._lock:
                self.tokens += tokens

        try:
            yield received
        finally:
            with self._lock:
                self.tokens -= mine

    def ended(self, *, cached: bool, tokens: int) -> None:
        """A call ended with a reply: made (with its `tokens`) or served from the cache."""
        with self._lock:
            e = self._ended
            if cached:
                self._ended = Ended(e.made, e.cached + 1, e.tokens)
            else:
                self._ended = Ended(e.made + 1, e.cached, e.tokens + tokens)

    def counts(self) -> Ended:
        """The calls ended so far in this process (a stage takes the difference)."""
        with self._lock:
            return self._ended


LIVE = Live()
