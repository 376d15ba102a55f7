"""The buffered writer of a stage whose work runs with the warehouse closed: the calls of
its call log and its queued rows go in together, in short transactions (docs/design.md §10).
Used as a context manager: the last write when the work ends, and when it ends in an
exception (Ctrl-C, a failure) what finished goes in at once."""

from __future__ import annotations

import time
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from lilo.flows._stage import StageReport, log, open_warehouse
from lilo.tasks.config import Settings
from lilo.tasks.llm.ledger import LedgerReader, LedgerRows, call_log_path
from lilo.warehouse import WarehouseBusy

__all__ = ["WRITE_BYTES", "StageWriter"]

# The call log read and not yet written that makes a write at once, whatever the time: an
# endpoint's replies each up to `llm.max_reply_bytes` (16 MB), many at once, are never all
# held until the next write.
WRITE_BYTES = 64 * 1024 * 1024


class StageWriter:
    """A stage's writes while its work runs with the warehouse closed (docs/design.md §10): the
    calls from the stage's call log and the queued rows go in together, in one short
    transaction, at most every `every_s` seconds, and never more often than keeps writing
    under a twentieth of the stage's time (a write that took 0.3 s waits 6 s for the next:
    the call log on disk already keeps every call through a kill), unless `WRITE_BYTES` of
    the call log wait (big replies are written at once, not held); a write that finds the
    file held keeps its rows for the next one, and the last one waits up to `db_wait_s`.
    Each `flush` reads the calls logged since the last one, so the stage's report (and its
    progress line) counts them as they come, written or not yet."""

    def __init__(self, report: StageReport, settings: Settings, every_s: float = 2.0) -> None:
        self.report = report
        self.settings = settings
        self.every_s = every_s
        self._interval = every_s
        self._ledger = LedgerReader(
            call_log_path(settings.data_dir, report.run_id, report.stage), report.stage
        )
        self.log = self._ledger.log  # the stage's LLM clients append their calls to it
        self._calls = LedgerRows()  # read and counted, not yet written
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

    def __enter__(self) -> StageWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.flush(final=True)
            return
        # An exception (Ctrl-C, a failure): what finished goes in now if the file is free
        # at once; the call log stays for the next start, which adds the requests still in
        # flight (flows/_crash_recovery.py).
        try:
            written = self._write(final=False, wait_s=0.0)
        except Exception as error:
            log.warning("%s: finished work stays for the next start: %s", self.report.stage, error)
            return
        if not written and self._rows:
            log.warning(
                "%s: %d finished rows not written (the warehouse is busy): the next start takes "
                "their replies from the call log into the cache, so the next run remakes them "
                "with no new LLM call",
                self.report.stage,
                sum(len(rows) for rows in self._rows.values()),
            )

    def flush(self, *, final: bool = False) -> None:
        """Count the calls logged since the last flush; write them and the queued rows when
        the last write is `every_s` (or more, see above) ago, and at the `final` one, which
        also adds the requests that got no reply and removes the call log."""
        wait_s = None if final else 0.0
        # The log read to its end in steps of at most WRITE_BYTES, written whenever that
        # much waits.
        while self._read(final=False):
            if self._calls.log_bytes >= WRITE_BYTES and not self._write(final=False, wait_s=wait_s):
                break  # the file is busy: the rows wait for the next write
        if not final and time.monotonic() - self._last < self._interval:
            return
        if self._write(final=final, wait_s=wait_s) and final:
            self.log.remove()

    def _read(self, *, final: bool) -> int:
        """Read the next step of the call log; the bytes it read."""
        calls = self._ledger.read(final=final, most=WRITE_BYTES)
        self.report.count_calls(calls)
        self._calls.extend(calls)
        return calls.log_bytes

    def _write(self, *, final: bool, wait_s: float | None) -> bool:
        """One write of the calls read and the rows queued; False when the file was busy
        (kept for the next write). `final`: the last calls and unanswered requests too."""
        started = time.monotonic()
        try:
            wh = open_warehouse(self.settings, wait_s)
        except WarehouseBusy as exc:
            if final:
                raise
            log.info("%s: writes wait: %s", self.report.stage, exc)
            return False
        with wh:
            self._read(final=final)  # final: requests that got no reply are counted too
            with wh.transaction():
                self.report.write_calls(wh, self._calls)
                for (table, key, update), rows in self._rows.items():
                    extra = self._extra.get(table)
                    self.report.write(wh, table, rows, key, update=update, extra=extra)
                for stage_name, item_ids in self._cleared.items():
                    wh.clear_quarantine(stage_name, item_ids)
        self._calls, self._rows, self._cleared = LedgerRows(), {}, {}
        self._last = time.monotonic()
        self._interval = max(self.every_s, 20 * (self._last - started))
        return True
