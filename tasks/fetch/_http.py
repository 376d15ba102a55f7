"""Polite HTTP to arXiv, shared by metadata queries and e-print downloads (docs/design.md §3): one
request per `arxiv.delay_s` across every thread and both endpoints, retries with exponential
backoff (full jitter, tasks/backoff.py) on 429/5xx, timeouts and dropped or cut-short
connections, `Retry-After` honoured. Requests go through `requests` (`arxiv_session`): each
ends within `arxiv.timeout_s` and reads a bounded reply (tasks/bounded_requests.py)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

import requests

from lilo.tasks.backoff import Backoff
from lilo.tasks.bounded_http import Bounds
from lilo.tasks.bounded_requests import BoundedSession, DeadlinePassed
from lilo.tasks.config import ArxivSettings
from lilo.tasks.errors import LiloError

__all__ = ["FetchError", "RetryableStatus", "arxiv_session", "check_retryable", "polite"]

T = TypeVar("T")
_RETRYABLE = frozenset({429, 500, 502, 503, 504})
# Network failures worth another try: refused or dropped connections, timeouts (the
# request's deadline included), a body that ended before its Content-Length (urllib3 reports
# it as a chunked-encoding error), and a compressed body that does not inflate.
_TRANSIENT = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
    DeadlinePassed,
)


class FetchError(LiloError):
    """A request that did not succeed within the retries, or can never succeed."""


class RetryableStatus(LiloError):
    """A 429/5xx reply: worth another try after `retry_after_s` (or the backoff if longer)."""

    def __init__(self, status: int, retry_after_s: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.retry_after_s = retry_after_s


class _Pacer:
    """One request at a time per `delay_s`, across all threads of the process: arXiv's
    limit is per client, not per thread."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._lock = threading.Lock()
        self._last = float("-inf")
        self._clock, self._sleep = clock, sleep

    def wait(self, delay_s: float) -> float:
        """Returns when a request may go, `delay_s` after the one before went: the time
        (`clock`) it goes."""
        with self._lock:
            pause = self._last + delay_s - self._clock()
            if pause > 0:
                self._sleep(pause)
            self._last = self._clock()
            return self._last


_PACER = _Pacer()
_RNG = random.Random()  # draws the jittered backoff of `polite` unless given one


def arxiv_session(cfg: ArxivSettings, bounds: Bounds) -> BoundedSession:
    """A `requests` session for arXiv that says who it is (arXiv asks clients to), each
    request and its reply bounded by `bounds`."""
    session = BoundedSession(bounds)
    session.headers["User-Agent"] = cfg.user_agent
    return session


def check_retryable(response: requests.Response) -> requests.Response:
    """`response` itself, or `RetryableStatus` (the connection released) for a 429/5xx."""
    if response.status_code in _RETRYABLE:
        response.close()
        raise RetryableStatus(response.status_code, _retry_after(response))
    return response


def polite(
    attempt: Callable[[], T], url: str, cfg: ArxivSettings, rng: random.Random | None = None
) -> T:
    """Call `attempt` (one paced request, body read) until it returns, at most
    `cfg.retries + 1` times. The wait before try n+1 is drawn by `rng` (`_RNG` if None) in
    [0, `backoff_s` doubled n times], or the server's `Retry-After` when that is longer.
    Raises `FetchError` saying what went wrong last."""
    problem, policy, rng = "", Backoff(first_s=cfg.backoff_s), rng or _RNG
    for tries in range(cfg.retries + 1):
        _PACER.wait(cfg.delay_s)
        backoff = policy.jittered_s(tries, rng)
        try:
            return attempt()
        except RetryableStatus as err:
            problem, wait = str(err), max(backoff, err.retry_after_s or 0.0)
        except _TRANSIENT as err:
            problem, wait = f"{type(err).__name__}: {err}", backoff
        if tries < cfg.retries:
            time.sleep(wait)
    raise FetchError(f"{problem} from {url} after {cfg.retries + 1} attempts; try again later")


def _retry_after(response: requests.Response) -> float | None:
    """`Retry-After` in seconds: either a number or an HTTP date."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
