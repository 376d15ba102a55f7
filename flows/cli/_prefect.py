"""Prefect for a command that runs flows: its server started early, the first run's
libraries loaded on a warm-up thread, tracebacks kept off the console."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lilo.flows.cli._errors import CLIError
from lilo.tasks.config import Settings

__all__ = ["running_flows", "start_prefect_early"]


def start_prefect_early(settings: Settings) -> None:
    """Start Prefect's temporary API server now, for a command that will run flows and has
    no PREFECT_API_URL: its start runs while the command prepares (flows/cli/_server.py);
    `running_flows` waits for it. On a new warehouse every stage has work, so the libraries
    the clean and samples stages load (Great Expectations, the local embedding model: about
    4 s) load meanwhile on a thread; a warehouse with results may need neither. A data
    dir that is not lilo's is refused first, before anything is written there."""
    from lilo.flows.cli._server import start
    from lilo.tasks.files import claim_data_dir

    claim_data_dir(settings.data_dir)
    start(settings.data_dir)
    if not settings.db_path.exists():
        threading.Thread(target=_warm_up, args=(settings,), name="warm-up", daemon=True).start()


def _warm_up(settings: Settings) -> None:
    """Loads what a first run needs; a failure here is the stage's to report, later."""
    with contextlib.suppress(Exception):
        import great_expectations  # noqa: F401

        if settings.embedding.backend == "local":
            from lilo.tasks.embeddings import Embedder

            Embedder(settings).label  # noqa: B018 (loads the model)


@contextmanager
def running_flows(debug: bool) -> Iterator[None]:
    """Flows run from a terminal: heartbeats off (fine for one-off runs, docs/design.md §13) and,
    unless `debug`, no tracebacks on the console: a failure is the one line `main` prints,
    and its traceback still reaches the run's logs in the Prefect UI."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        temporary_settings,
    )

    from lilo.flows.cli._server import wait

    try:
        api_url = wait()
    except RuntimeError as exc:
        raise CLIError(str(exc), code=1) from exc
    updates: dict[Any, Any] = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if api_url:
        updates[PREFECT_API_URL] = api_url
    ensure_logging_setup()
    quiet = _NoTraceback()
    handlers = [] if debug else list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        with temporary_settings(updates=updates):
            yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


class _NoTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None
