"""The published copy of the warehouse that analysts read, refreshed as a run ends."""

from __future__ import annotations

from lilo.flows._stage import log, open_warehouse
from lilo.tasks.config import Settings
from lilo.warehouse.publishing import publish_warehouse

__all__ = ["publish"]


def publish(settings: Settings, *, quiet: bool = False) -> None:
    """The copy analysts read, with this run's results and its final status. After a
    failure (`quiet`), a copy that cannot be made is a warning: the failure is the news."""
    try:
        with open_warehouse(settings) as wh:
            publish_warehouse(wh, settings.published_path, settings.data_dir)
    except Exception as exc:
        if not quiet:
            raise
        log.warning("the published copy was not refreshed: %s", exc)
