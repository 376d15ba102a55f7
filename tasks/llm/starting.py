"""Endpoints started on first use: a server lilo starts itself for a command
(flows/cli/_local_model.py) is started when the first request needs it, so that a command
whose replies are all in the cache starts none. The client asks `ensure_started` before it
asks an endpoint anything (tasks/llm/window.py `ContextWindow.facts`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lilo.tasks.errors import LiloError
from lilo.tasks.llm.types import LLMError

__all__ = ["NotStarted", "ensure_started", "started_on_first_use", "starts_on_first_use"]


class NotStarted(LLMError):
    """The server lilo starts for the command did not start: each call to it fails so, and
    is recorded as failed; the command then fails saying why (flows/cli/_local_model.py)."""


_STARTERS: dict[str, Callable[[], None]] = {}
_LOCK = threading.Lock()


@contextmanager
def started_on_first_use(base_url: str, start: Callable[[], None]) -> Iterator[None]:
    """While the block runs, the first request to `base_url` in this process calls `start`
    (which returns once the server answers) before it is sent."""
    with _LOCK:
        _STARTERS[base_url] = start
    try:
        yield
    finally:
        with _LOCK:
            _STARTERS.pop(base_url, None)


def ensure_started(base_url: str) -> None:
    """Starts the server at `base_url` if lilo starts it and has not yet; the callers that
    come meanwhile wait for it. A start that failed is NotStarted for every caller (`start`
    says so again)."""
    with _LOCK:
        start = _STARTERS.get(base_url)
        if start is None:
            return
        try:
            start()
        except LiloError as exc:
            raise NotStarted(str(exc)) from None
        _STARTERS.pop(base_url, None)


def starts_on_first_use(base_url: str | None) -> bool:
    """Whether lilo starts the server at `base_url` when a request first needs it (the
    preflight does not ask it: flows/_preflight.py)."""
    with _LOCK:
        return base_url in _STARTERS
