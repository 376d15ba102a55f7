"""What every stage flow shares: its report (what it added, the LLM calls and tokens it
counted), its timing, and the warehouse it opens (docs/design.md §10). A stage whose work runs
with the warehouse closed writes through flows/_stage_writer.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lilo import warehouse
from lilo.flows import _shared_limits
from lilo.tasks.config import Settings
from lilo.tasks.files import claim_data_dir
from lilo.tasks.llm.ledger import LedgerRows
from lilo.tasks.scoring import leaderboard_scores
from lilo.warehouse import Warehouse

# The LLM clients made in this process take the endpoint-wide limits (flows/_shared_limits.py).
_shared_limits.install()

__all__ = [
    "StageReport",
    "log",
    "open_warehouse",
    "stage",
    "unfinished_report",
    "timed_stage",
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
    cost: float = 0.0  # of the priced calls made
    unpriced: list[str] = field(default_factory=list)  # "backend:model" made without a price
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

    def save_calls(self, wh: Warehouse, rows: LedgerRows) -> None:
        """A step of the stage's call log: counted, and written (`write_calls`)."""
        self.count_calls(rows)
        self.write_calls(wh, rows)

    def count_calls(self, rows: LedgerRows) -> None:
        """The calls and tokens of a step of the stage's call log, as it is read."""
        self.llm_made += rows.made
        self.llm_cached += rows.cached
        self.tokens_in += rows.tokens_in
        self.tokens_out += rows.tokens_out
        self.cost += rows.cost
        self.unpriced = sorted(set(self.unpriced) | rows.unpriced)

    def write_calls(self, wh: Warehouse, rows: LedgerRows) -> None:
        """Calls into the `fct_llm_calls` ledger, new responses into `llm_cache`."""
        self.write(wh, "llm_cache", rows.cache, ("key",), raw_json=True)
        self.write(wh, "fct_llm_calls", rows.ledger, ("run_id", "stage", "seq"))
        self.write(wh, "fct_llm_calls", rows.unanswered, ("run_id", "stage", "seq"))


def open_warehouse(settings: Settings, wait_s: float | None = None) -> Warehouse:
    """The warehouse, waiting up to `db_wait_s` (or `wait_s`) while another process (a
    reviewer's CLI, another run, an analyst who opened it) holds the file. The data dir must
    be lilo's (tasks/files.py `claim_data_dir`). Its views get the registered leaderboard
    scores (`score_columns`): the warehouse does not read the scorers itself."""
    claim_data_dir(settings.data_dir)
    return warehouse.open_warehouse(
        settings.db_path, settings.db_wait_s if wait_s is None else wait_s, score_columns()
    )


def score_columns() -> list[tuple[str, str]]:
    """The registered leaderboard scores (tasks/scoring/) as the warehouse's views take them:
    (name in the score rows, column), in column order."""
    return [(h.name, h.column) for h in leaderboard_scores()]


@contextmanager
def stage(name: str, settings: Settings, run_id: str) -> Iterator[tuple[StageReport, Warehouse]]:
    """A timed stage with its warehouse connection, closed when the stage ends: for stages
    that make no LLM call while they hold it."""
    with timed_stage(name, run_id) as report, open_warehouse(settings) as wh:
        yield report, wh


@contextmanager
def timed_stage(name: str, run_id: str) -> Iterator[StageReport]:
    """A timed stage that holds no warehouse connection: it opens the warehouse itself for
    short reads and writes (`open_warehouse`), so another process can write while it calls
    models; `stage` is one with a connection held throughout. A stage that ends in an
    exception (Ctrl-C, SIGTERM, a failure) returns no report: its report, timed to the
    exception, is kept for the run's record (`unfinished_report`)."""
    report = StageReport(stage=name, run_id=run_id)
    started = time.perf_counter()
    _UNFINISHED[run_id] = report
    try:
        yield report
    finally:
        report.seconds = round(time.perf_counter() - started, 3)
    _UNFINISHED.pop(run_id, None)


# Per run id, the report of the stage under way, until it ends without an exception.
_UNFINISHED: dict[str, StageReport] = {}


def unfinished_report(run_id: str) -> StageReport | None:
    """The report of the run's stage that ended in an exception (what it did until then:
    its time, calls, tokens and rows), once; None when every stage ended."""
    return _UNFINISHED.pop(run_id, None)
