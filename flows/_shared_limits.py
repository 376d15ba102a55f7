"""Limits that hold for an endpoint as a whole, the flows' side of tasks/llm/shared.py:
with a Prefect server configured (PREFECT_API_URL in the environment or the profile, a
server every worker shares), each request takes a slot of a global concurrency limit and
one of a rate limit, both on the server and named after the endpoint and model, around the
per-process limits (tasks/llm/limits.py). A temporary server Prefect starts for one run is
not configured: its limits would hold for that run's processes only. A server that cannot
be reached leaves the per-process limits, said once in one line.

The rate limit is a global concurrency limit whose slots decay at `rpm`/60 a second,
with `_BURST` slots: over any window of W seconds at most `_BURST + rpm * W / 60`
requests start, endpoint-wide."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from lilo.tasks.llm.limits import Limits
from lilo.tasks.llm.shared import provide_shared_limits

__all__ = ["SharedLimits", "configured_api", "install", "limit_names", "shared_limits_for"]

log = logging.getLogger("lilo")

_BURST = 1  # requests the rate limit lets start at once, beyond its decay


def configured_api() -> str:
    """The Prefect API this process was configured with (environment, then profile), ""
    without one. Read afresh, not from Prefect's context: a run's temporary server is set
    there for its workers (flows/_units.py) and is not a configured one."""
    from prefect.settings import Settings

    return str(Settings().api.url or "")


def limit_names(endpoint: str, model: str) -> tuple[str, str]:
    """The server's concurrency and rate limit names for `model` at `endpoint` (a base
    URL or a backend label): `lilo-<host:port>-<model>` and that with `-rpm`, sanitised."""
    host = urlsplit(endpoint).netloc or endpoint
    base = re.sub(r"[^A-Za-z0-9._:-]+", "-", f"lilo-{host}-{model}").strip("-")
    return base, f"{base}-rpm"


@dataclass
class SharedLimits:
    """One endpoint and model's limits on the Prefect server at `api`; `broken` once the
    server failed, from when on only the per-process limits hold."""

    api: str
    concurrency_name: str
    rate_name: str
    limits: Limits
    broken: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            if self.broken:
                return
            self.broken = True
        log.warning(
            "lilo: the Prefect server at %s failed (%s): the limits of %s fall back to "
            "per-process; set llm.shared_limits=off to not try it",
            self.api,
            type(exc).__name__,
            self.concurrency_name,
        )

    def ensure(self) -> None:
        """The two limits on the server, created or set to this run's values."""
        from prefect.client.orchestration import get_client
        from prefect.exceptions import ObjectAlreadyExists

        try:
            with get_client(sync_client=True) as client:
                wanted: list[tuple[str, int, float | None]] = [
                    (self.concurrency_name, self.limits.concurrency, None)
                ]
                if self.limits.rpm:
                    wanted.append((self.rate_name, _BURST, self.limits.rpm / 60.0))
                for name, limit, decay in wanted:
                    try:
                        client.upsert_global_concurrency_limit_by_name(name, limit, decay)
                    except ObjectAlreadyExists:  # another process created it meanwhile
                        client.upsert_global_concurrency_limit_by_name(name, limit, decay)
        except Exception as exc:  # noqa: BLE001 (any failure: per-process limits, said)
            self._fail(exc)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """A concurrency slot held around the request and a rate slot taken before it;
        nothing once the server failed."""
        if self.broken:
            yield
            return
        from prefect.concurrency.sync import concurrency, rate_limit

        try:
            held = concurrency(self.concurrency_name, occupy=1, strict=True)
            held.__enter__()
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
            yield
            return
        try:
            if self.limits.rpm:
                try:
                    rate_limit(self.rate_name, occupy=1, strict=True)
                except Exception as exc:  # noqa: BLE001
                    self._fail(exc)
            yield
        finally:
            try:
                held.__exit__(None, None, None)
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)


_SHARED: dict[tuple[str, str, Limits], SharedLimits] = {}
_LOCK = threading.Lock()


def shared_limits_for(
    endpoint: str, model: str, limits: Limits, mode: Literal["auto", "off"]
) -> SharedLimits | None:
    """The server-side limits of `model` at `endpoint` (created or updated on the server
    the first time this process asks), or None: `mode` off, no configured server, or
    lilo's own engine (the offline backend calls no endpoint)."""
    if mode == "off" or endpoint.startswith("offline:"):
        return None
    api = configured_api()
    if not api:
        return None
    with _LOCK:
        key = (endpoint, model, limits)
        if key not in _SHARED:
            names = limit_names(endpoint.split(":", 1)[-1], model)
            _SHARED[key] = SharedLimits(api, *names, limits)
            _SHARED[key].ensure()
        return _SHARED[key]


def install() -> None:
    """Every LLM client this process makes from now on takes these limits (tasks/llm/shared.py);
    called where the flows' stages and units run (flows/_stage.py, flows/_units.py)."""
    provide_shared_limits(shared_limits_for)
