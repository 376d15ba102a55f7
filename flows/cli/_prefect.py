"""Prefect for a command that runs flows: its server started early, the first run's
libraries loaded on a warm-up thread, tracebacks kept off the console."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lilo.tasks.config import EmbeddingSettings, Settings

__all__ = ["lilo_defaults", "quiet_prefect", "running_flows", "start_prefect_early"]


_DEFAULTED: set[str] = set()


def lilo_defaults() -> frozenset[str]:
    """The environment variables set by `quiet_prefect`, not by the user."""
    return frozenset(_DEFAULTED)


def quiet_prefect() -> None:
    """Prefect's own chatter off for terminal runs; lilo's stage lines stay (and reach the UI).
    Set before any command module loads: Prefect reads its settings once, when first
    imported (flows/cli/_main.py calls this first). `--debug` shows Prefect's lines again
    (`running_flows`), as does PREFECT_LOGGING_LEVEL set by the user."""
    defaults = {
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_LOGGING_EXTRA_LOGGERS": "lilo",
        # A line logged on a worker thread outside any flow run (an endpoint's note, say)
        # reaches the terminal; Prefect's warning that it cannot reach the UI is noise.
        "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TRANSFORMERS_VERBOSITY": "error",
    }
    for key, value in defaults.items():
        if key not in os.environ:
            os.environ[key] = value
            _DEFAULTED.add(key)
    logging.getLogger("lilo").setLevel(logging.INFO)


def start_prefect_early(settings: Settings, *, embeds: bool = True) -> None:
    """Start Prefect's temporary API server now, for a command that will run flows and has
    no PREFECT_API_URL: its start runs while the command prepares (flows/cli/_server.py);
    `running_flows` waits for it. On a new warehouse every stage has work, so the libraries
    the clean and samples stages load (Great Expectations, the local embedding model: about
    4 s) load meanwhile on a thread; a warehouse with results may need neither, and a
    command that validates papers but `embeds` nothing (an import) never loads the model.
    A data dir that is not lilo's is refused first, before anything is written there."""
    from lilo.flows.cli._server import start
    from lilo.tasks.files import claim_data_dir

    claim_data_dir(settings.data_dir)
    start(settings.data_dir)
    if not settings.db_path.exists():
        warm = threading.Thread(
            target=_warm_up, args=(settings.embedding, settings.data_dir, embeds), name="warm-up"
        )
        warm.daemon = True
        warm.start()


def _warm_up(embedding: EmbeddingSettings, data_dir: Path, embeds: bool) -> None:
    """Loads what a first run needs; a failure here is the stage's to report, later."""
    with contextlib.suppress(Exception):
        import great_expectations  # noqa: F401

        if embeds and embedding.backend == "local":
            from lilo.tasks.embeddings import Embedder

            Embedder(embedding, data_dir).label  # noqa: B018 (loads the model)


@contextmanager
def running_flows(debug: bool) -> Iterator[None]:
    """Flows run from a terminal: heartbeats off (fine for one-off runs, docs/design.md §13);
    on the console lilo's own lines, each printable (tasks/printable.py), and Prefect's
    warnings; with `debug` Prefect's lines too and tracebacks, else no traceback: a failure is
    the one line `main` prints, and its traceback still reaches the run's logs in the Prefect
    UI. Links to Prefect's temporary server are left out: it is gone when the command ends."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        temporary_settings,
    )

    from lilo.flows.cli._server import wait
    from lilo.tasks.printable import PrintableRecords

    api_url = wait()  # Unavailable (exit 1, its line alone) when the server does not start
    updates: dict[Any, Any] = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if api_url:
        updates[PREFECT_API_URL] = api_url
    ensure_logging_setup()
    if debug and "PREFECT_LOGGING_LEVEL" in lilo_defaults():
        logging.getLogger("prefect").setLevel(logging.INFO)
    filters: list[logging.Filter] = [PrintableRecords()]
    if api_url:  # lilo's temporary server: its address answers only while the command runs
        filters.append(_NoLinks())
    if not debug:
        filters.append(_NoTraceback())
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        for f in filters:
            handler.addFilter(f)
    try:
        with temporary_settings(updates=updates):
            yield
    finally:
        for handler in handlers:
            for f in filters:
                handler.removeFilter(f)


class _NoTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None


class _NoLinks(logging.Filter):
    """Prefect's `View at http://...` lines, whose address is gone with the temporary server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("View at ")
