"""What every stage flow shares: its report, how LLM calls reach the warehouse, and how a
stage writes without holding the warehouse while it works (DESIGN §10)."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import warehouse
from tasks.config import Settings
from tasks.llm.ledger import CallLog, call_log_path, read_calls, read_sent
from tasks.records import LLMCall
from warehouse import Warehouse, WarehouseBusy
from warehouse.queries.runs import running_runs

__all__ = [
    "StageReport",
    "StageWriter",
    "fold_call_logs",
    "log",
    "open_warehouse",
    "stage",
    "unheld_stage",
]

log = logging.getLogger("lilo")
# lilo's stage lines are INFO: without its own level the logger inherits the root's
# (WARNING in a worker) and the lines never reach the flow run's logs in a deployment.
log.setLevel(logging.INFO)


@dataclass
class StageReport:
    """A stage's account of itself; the pipeline sums these into the run record."""

    stage: str
    run_id: str
    seconds: float = 0.0
    rows_added: dict[str, int] = field(default_factory=dict)
    llm_made: int = 0
    llm_cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    embeddings_made: int = 0
    embeddings_cached: int = 0
    notes: list[str] = field(default_factory=list)

    def added(self, table: str, n: int) -> None:
        if n:
            self.rows_added[table] = self.rows_added.get(table, 0) + n

    def write(
        self,
        wh: Warehouse,
        table: str,
        records: Iterable[Any],
        key: tuple[str, ...],
        *,
        update: bool = False,
        extra: dict[str, Any] | None = None,
        raw_json: bool = False,
    ) -> None:
        """Upsert records stamped with this run's id, and count the rows they added."""
        added = wh.upsert(
            table,
            records,
            key,
            update=update,
            raw_json=raw_json,
            extra={"run_id": self.run_id, **(extra or {})},
        )
        self.added(table, added)

    def note(self, message: str) -> None:
        self.notes.append(message)
        log.info("%s: %s", self.stage, message)

    def save_calls(self, wh: Warehouse, calls: list[LLMCall]) -> None:
        """Every call goes into the `fct_llm_calls` ledger; new responses into `llm_cache`.
        A call's `seq` is its rank in the stage, as in its call log."""
        ledger = [
            {
                "stage": self.stage,
                "seq": self.llm_made + self.llm_cached + n,
                "key": c.key,
                "backend": c.backend,
                "model": c.model,
                "purpose": c.purpose,
                "cached": c.cached,
                "tokens_in": c.tokens_in,
                "tokens_out": c.tokens_out,
                "latency_s": c.latency_s,
            }
            for n, c in enumerate(calls)
        ]
        fresh = [c for c in calls if not c.cached]
        self.llm_made += len(fresh)
        self.llm_cached += len(calls) - len(fresh)
        self.tokens_in += sum(c.tokens_in for c in fresh)
        self.tokens_out += sum(c.tokens_out for c in fresh)
        rows = [
            {
                "key": c.key,
                "backend": c.backend,
                "model": c.model,
                "purpose": c.purpose,
                "request": c.request,
                "response": c.response,
                "tokens_in": c.tokens_in,
                "tokens_out": c.tokens_out,
                "latency_s": c.latency_s,
            }
            for c in fresh
        ]
        # `request` is already JSON text: store it as such, not re-encoded.
        self.write(wh, "llm_cache", rows, ("key",), raw_json=True)
        self.write(wh, "fct_llm_calls", ledger, ("run_id", "stage", "seq"))

    def save_unanswered(self, wh: Warehouse, calls: CallLog, answered: Counter[str]) -> int:
        """The requests of `calls`' `.sent` log that got no reply (in flight at a kill, or
        failed after the backend's retries) go into the ledger after the stage's calls, with
        `replied` false: the endpoint received them. `answered` counts the keys of the
        replies in the log, all saved already."""
        answered = answered.copy()
        unanswered = []
        for r in read_sent(calls.sent_path):
            if answered[r["key"]] > 0:
                answered[r["key"]] -= 1
            else:
                unanswered.append(r)
        first = self.llm_made + self.llm_cached
        rows = [
            {"stage": self.stage, "seq": first + n, "key": r["key"], "backend": r["backend"],
             "model": r["model"], "purpose": r["purpose"], "cached": False, "replied": False}
            for n, r in enumerate(unanswered)
        ]  # fmt: skip
        self.write(wh, "fct_llm_calls", rows, ("run_id", "stage", "seq"))
        self.llm_made += len(rows)
        return len(rows)


def open_warehouse(settings: Settings, wait_s: float | None = None) -> Warehouse:
    """The warehouse, waiting up to `db_wait_s` (or `wait_s`) while another process (a
    reviewer's CLI, another run, an analyst who opened it) holds the file."""
    return warehouse.open_warehouse(
        settings.db_path, settings.db_wait_s if wait_s is None else wait_s
    )


@contextmanager
def stage(name: str, settings: Settings, run_id: str) -> Iterator[tuple[StageReport, Warehouse]]:
    """A timed stage with its warehouse connection, closed when the stage ends: for stages
    that make no LLM call while they hold it."""
    with unheld_stage(name, run_id) as report, open_warehouse(settings) as wh:
        yield report, wh


@contextmanager
def unheld_stage(name: str, run_id: str) -> Iterator[StageReport]:
    """A timed stage that opens the warehouse only for short reads and writes."""
    report = StageReport(stage=name, run_id=run_id)
    started = time.perf_counter()
    try:
        yield report
    finally:
        report.seconds = round(time.perf_counter() - started, 3)


class StageWriter:
    """A stage's writes while its work runs with the warehouse closed (DESIGN §10): the
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
        self.log = CallLog(call_log_path(settings.data_dir, report.run_id, report.stage))
        self._read_to = 0
        self._answered: Counter[str] = Counter()  # replies read so far, by key
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
            calls, self._read_to = read_calls(self.log.path, self._read_to)
            self._answered.update(c.key for c in calls if not c.cached)
            with wh.transaction():
                self.report.save_calls(wh, calls)
                if final:  # requests that got no reply (their units failed) are counted too
                    self.report.save_unanswered(wh, self.log, self._answered)
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


def fold_call_logs(wh: Warehouse, data_dir: Path) -> int:
    """Fold the call logs that killed runs left (those of runs no longer `running`) into the
    ledger and the cache table, then remove them; returns the calls folded. Lines the run
    itself folded add nothing again (same run, stage and seq). A request in the run's
    `.sent` log with no reply in its call log was in flight at the kill: it goes into the
    ledger with `replied` false, after the stage's calls."""
    running = {r[0] for r in running_runs(wh)}
    folded = 0
    logs = {p.with_suffix("") for p in (data_dir / "runs").glob("*/*.jsonl")}
    logs |= {p.with_suffix("") for p in (data_dir / "runs").glob("*/*.sent")}
    for stem in sorted(logs):
        run_id, stage_name = stem.parent.name, stem.name
        if run_id in running:
            continue
        log = CallLog(stem.with_suffix(".jsonl"))
        calls, _ = read_calls(log.path)
        report = StageReport(stage=stage_name, run_id=run_id)
        with wh.transaction():
            report.save_calls(wh, calls)
            answered = Counter(c.key for c in calls if not c.cached)
            lost = report.save_unanswered(wh, log, answered)
        folded += len(calls) + lost
        log.remove()
        if not any(stem.parent.iterdir()):
            stem.parent.rmdir()
    return folded
