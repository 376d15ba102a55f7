"""Limits that hold for an endpoint as a whole, across processes: a hook the flows fill in
(flows/_shared_limits.py: Prefect's global concurrency and rate limits on a configured
server), as tasks/ knows no orchestrator. Without it each process's own limits hold
(tasks/llm/limits.py), as they do beside it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Literal, Protocol

from lilo.tasks.llm.limits import Limits

__all__ = ["SharedSlots", "provide_shared_limits", "shared_limits_for"]


class SharedSlots(Protocol):
    """One endpoint and model's limits shared with other processes."""

    def slot(self) -> AbstractContextManager[None]:
        """Held around one request."""
        ...


Provider = Callable[[str, str, Limits, Literal["auto", "off"]], SharedSlots | None]
_PROVIDER: list[Provider] = []


def provide_shared_limits(provider: Provider) -> None:
    """`provider` gives the shared limits of every client made from now on in this process."""
    _PROVIDER[:] = [provider]


def shared_limits_for(
    endpoint: str, model: str, limits: Limits, mode: Literal["auto", "off"]
) -> SharedSlots | None:
    """The shared limits of `model` at `endpoint`, or None: `mode` off, or none provided."""
    if mode == "off" or not _PROVIDER:
        return None
    return _PROVIDER[0](endpoint, model, limits, mode)
