"""The buffered writer of a stage whose work runs with the warehouse closed: the calls of
its call log and its queued rows go in together, in short transactions (docs/design.md §10)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from lilo.flows._stage import StageReport, log, open_warehouse
from lilo.tasks.config import Settings
from lilo.tasks.llm.ledger import LedgerReader, call_log_path
from lilo.warehouse import WarehouseBusy

__all__ = ["StageWriter"]


class StageWriter:
    """A stage's writes while its work runs with the warehouse closed (docs/design.md §10): the
    calls from the stage's call log and the queued rows go in together, in one short
    transaction, at most every `every_s` seconds, and never more often than keeps writing
    under a twentieth of the stage's time (a write that took 0.3 s waits 6 s for the next:
    the call log on disk already keeps every call through a kill); a write that finds the
    file held keeps its rows for the next one, and the last one waits up to `db_wait_s`."""

    def __init__(self, report: StageReport, settings: Settings, every_s: float = 2.0) -> None:
        self.report = report
        self.settings = settings
        self.every_s = every_s
        self._interval = every_s
        self._ledger = LedgerReader(
            call_log_path(settings.data_dir, report.run_id, report.stage), report.stage
        )
        self.log = self._ledger.log  # the stage's LLM clients append their calls to it
        self._rows: dict[tuple[str, tuple[str, ...], bool], list[Any]] = {}
        self._extra: dict[str, dict[str, Any]] = {}
        self._cleared: dict[str, list[str]] = {}
        self._last = time.monotonic()

    def queue_rows(
        self,
        table: str,
        records: Iterable[Any],
        key: tuple[str, ...],
        *,
        update: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Rows for `table`, upserted with the others queued for it in one statement at the
        next write (each statement costs tens of ms, whatever its size)."""
        self._rows.setdefault((table, key, update), []).extend(records)
        if extra:
            self._extra[table] = extra

    def queue_cleared(self, stage: str, item_ids: Iterable[str]) -> None:
        """Items that got through `stage`: their quarantine rows go at the next write,
        after the queued rows."""
        self._cleared.setdefault(stage, []).extend(item_ids)

    def flush(self, *, final: bool = False) -> None:
        if not final and time.monotonic() - self._last < self._interval:
            return
        started = time.monotonic()
        try:
            wh = open_warehouse(self.settings, None if final else 0.0)
        except WarehouseBusy as exc:
            if final:
                raise
            log.info("%s: writes wait: %s", self.report.stage, exc)
            return
        with wh:
            # final: requests that got no reply (their units failed) are counted too
            calls = self._ledger.read(final=final)
            with wh.transaction():
                self.report.save_calls(wh, calls)
                for (table, key, update), rows in self._rows.items():
                    extra = self._extra.get(table)
                    self.report.write(wh, table, rows, key, update=update, extra=extra)
                for stage_name, item_ids in self._cleared.items():
                    wh.clear_quarantine(stage_name, item_ids)
        self._rows, self._cleared = {}, {}
        self._last = time.monotonic()
        self._interval = max(self.every_s, 20 * (self._last - started))
        if final:
            self.log.remove()
