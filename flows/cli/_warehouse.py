"""The warehouse and its published copy, as commands that read results find them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lilo.flows.cli._errors import CLIError
from lilo.tasks.config import Settings

__all__ = ["published_results", "require_warehouse"]


def require_warehouse(settings: Settings) -> None:
    """Commands that read results never create a warehouse: a mistyped --data-dir says so."""
    if not settings.db_path.exists():
        raise CLIError(
            f"no warehouse at {settings.db_path}: pass the --data-dir that holds lilo.duckdb, "
            "or create one with `lilo demo`, `lilo run` or `lilo import`"
        )


@contextmanager
def published_results(settings: Settings) -> Iterator[Any]:
    """A read-only connection to the published copy, for commands that read results; a
    missing warehouse or nothing published yet is a one-line error."""
    from lilo.warehouse.read_only import read_only

    require_warehouse(settings)
    published = settings.published_path
    if not published.exists():
        raise CLIError(f"no published results at {published}: run the pipeline first", code=1)
    with read_only(published) as con:
        yield con
