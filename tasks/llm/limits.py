"""Concurrency and rate limits, one set per endpoint and model, shared by every client in
this process that calls that model there (the generator and the judge are two clients).
Each client brings its own limits; two clients that name different limits for one endpoint
and model are refused (`Settings` checks llm against judge before a run starts). A server
that says how many requests it computes at once (llama-server's slots) narrows the
concurrency to that: a request beyond it would wait in the server's queue, its wait counted
against the client's timeout."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

__all__ = ["EndpointLimits", "Limits", "RateLimit", "Slots", "limits_for"]


@dataclass(frozen=True)
class Limits:
    """Requests in flight at once, and requests and tokens per minute (0: no limit)."""

    concurrency: int
    rpm: int = 0
    tpm: int = 0

    def describe(self) -> str:
        return f"concurrency {self.concurrency}, rpm {self.rpm}, tpm {self.tpm}"


class RateLimit:
    """Requests and tokens per minute over a sliding 60 s window (0: no limit). A call is
    charged an estimate of its prompt's tokens when it starts and its real tokens (in and
    out) when it returns. With neither limit set it keeps no window at all."""

    def __init__(self, rpm: int, tpm: int) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._window: deque[list[float]] = deque()  # [start time, tokens, in window]
        self._used = 0.0  # the tokens in the window, kept as entries come and go
        self._lock = threading.Lock()

    def acquire(self, tokens: int) -> list[float]:
        if not self.rpm and not self.tpm:
            return [0.0, 0.0, 0.0]
        while True:
            with self._lock:
                now = time.monotonic()
                while self._window and self._window[0][0] <= now - 60.0:
                    gone = self._window.popleft()
                    self._used -= gone[1]
                    gone[2] = 0.0
                requests_ok = not self.rpm or len(self._window) < self.rpm
                tokens_ok = not self.tpm or not self._window or self._used + tokens <= self.tpm
                if requests_ok and tokens_ok:
                    entry = [now, float(tokens), 1.0]
                    self._window.append(entry)
                    self._used += entry[1]
                    return entry
                wait = self._window[0][0] + 60.0 - now
            time.sleep(min(max(wait, 0.01), 1.0))

    def settle(self, entry: list[float], tokens: int) -> None:
        if not self.rpm and not self.tpm:
            return
        with self._lock:
            if entry[2]:  # still in the window
                self._used += tokens - entry[1]
            entry[1] = float(tokens)


class Slots:
    """Requests in flight at once: at most `limit`, which `narrow` may lower, never raise."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._busy = 0
        self._turn = threading.Condition()

    def narrow(self, limit: int) -> None:
        with self._turn:
            self.limit = min(self.limit, max(limit, 1))

    def __enter__(self) -> None:
        with self._turn:
            self._turn.wait_for(lambda: self._busy < self.limit)
            self._busy += 1

    def __exit__(self, *exc: object) -> None:
        with self._turn:
            self._busy -= 1
            self._turn.notify()


@dataclass
class EndpointLimits:
    limits: Limits
    slots: Slots
    rate: RateLimit


_ENDPOINTS: dict[tuple[str, str, Limits], EndpointLimits] = {}
_LOCK = threading.Lock()


def limits_for(endpoint: str, model: str, limits: Limits) -> EndpointLimits:
    """The shared limits of `model` at `endpoint` as `limits` set them. Runs with other
    limits in the same process (a worker serving two deployments) get their own."""
    with _LOCK:
        key = (endpoint, model, limits)
        if key not in _ENDPOINTS:
            slots = Slots(limits.concurrency)
            _ENDPOINTS[key] = EndpointLimits(limits, slots, RateLimit(limits.rpm, limits.tpm))
        return _ENDPOINTS[key]
