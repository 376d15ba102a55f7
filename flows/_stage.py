"""What every stage flow shares: its report, and how LLM calls reach the warehouse."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import warehouse
from tasks.config import Settings
from tasks.records import LLMCall
from warehouse import Warehouse

__all__ = ["StageReport", "log", "open_warehouse", "stage"]

log = logging.getLogger("lilo")


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
        """Every call goes into the `fct_llm_calls` ledger; new responses into `llm_cache`."""
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


def open_warehouse(settings: Settings) -> Warehouse:
    """The warehouse, waiting up to `db_wait_s` while another process (a reviewer's CLI,
    another run) holds the file."""
    return warehouse.open_warehouse(settings.db_path, settings.db_wait_s)


@contextmanager
def stage(name: str, settings: Settings, run_id: str) -> Iterator[tuple[StageReport, Warehouse]]:
    """A timed stage with its warehouse connection, closed when the stage ends."""
    report = StageReport(stage=name, run_id=run_id)
    started = time.perf_counter()
    try:
        with open_warehouse(settings) as wh:
            yield report, wh
    finally:
        report.seconds = round(time.perf_counter() - started, 3)
