"""A run's record in the `runs` table: written when the run starts (with the process that runs
it), and at the end `completed`, `partial` (some units failed: failed generations,
`llm_error`/`judge_unusable` quarantine rows) or `failed` (with why), with what its stages
reported (docs/design.md §10). A run stopped by SIGINT or SIGTERM is `interrupted`
(tasks/lifetime.py), one stopped by its cap (`--max-tokens`, `--max-cost`) `stopped`; the
record of an interrupted or failed run adds up what it did, the stage the exception stopped
included (its time, calls, tokens and rows). A run killed before its end is marked `crashed`
by the next start (flows/_crash_recovery.py); one whose last write failed (a full disk) is
marked with the status and reason it could not write, kept in a small file reserved when it
started (flows/_run_note.py). At the end the published copy is refreshed (flows/_publish.py)
and the run's record attached to its flow run (flows/_run_artifact.py)."""

from __future__ import annotations

import os
import signal
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect.runtime import flow_run

from lilo.flows._crash_recovery import fold_call_logs, mark_crashed
from lilo.flows._publish import publish
from lilo.flows._run_artifact import run_artifact
from lilo.flows._run_note import note_path, reserve_note, write_note
from lilo.flows._stage import StageReport, log, open_warehouse, unfinished_report
from lilo.tasks.config import Settings
from lilo.tasks.errors import LiloError
from lilo.tasks.files import remove_stale_temp
from lilo.tasks.lifetime import budget_spent, interrupt_signal, stop
from lilo.tasks.llm import make_client
from lilo.tasks.provenance import code_version
from lilo.tasks.redact import redacted
from lilo.warehouse.publishing import publish_warehouse
from lilo.warehouse.queries.runs import run_failures

if TYPE_CHECKING:
    from prefect.settings import Settings as PrefectSettings

__all__ = ["RunFailed", "RunRecord", "recorded_run"]


class RunFailed(LiloError):
    """A run that cannot give what it was asked for; the message says which inputs and why
    (printed alone, exit 1). It is recorded `failed`, ends its Prefect run Failed, and
    publishes nothing new."""

    complete = True


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class RunRecord:
    """One run: its id, its stages' reports, and the `runs` row summing them."""

    def __init__(self, settings: Settings, flow_name: str) -> None:
        self.settings = settings
        self.run_id = flow_run.get_id() or str(uuid.uuid4())
        self.reports: list[StageReport] = []
        self._quiet: PrefectSettings | None = None
        self.row: dict[str, Any] = {
            "run_id": self.run_id,
            "flow": flow_name,
            "started_at": _now(),
            "status": "running",
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "config_hash": settings.config_hash(),
            "code_version": code_version(),
            "backbone": make_client(settings).backbone,
            "dataset_version": settings.dataset_version,
            "review_mode": settings.qa.review,
            "target_words": list(settings.generate.target_words),
            "settings": settings.model_dump(mode="json"),
        }

    def stage(
        self,
        stage_flow: Callable[[Settings, str], StageReport],
        settings: Settings | None = None,
    ) -> StageReport:
        """Runs one stage's subflow (over `settings`, default the run's) and records it.

        The subflow sends no heartbeat of its own: the run's flow run sends them for the
        process (a crash marks it Crashed), and Prefect waits up to a second at the end of a
        subflow for its heartbeat thread, which was most of a stage with nothing to do
        (docs/design.md §13)."""
        from prefect.context import SettingsContext, get_settings_context
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

        current = get_settings_context()
        if self._quiet is None:  # built once: a copy of Prefect's settings costs 0.1 s
            self._quiet = current.settings.copy_with_update(
                updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
            )
        with SettingsContext(profile=current.profile, settings=self._quiet):
            report = stage_flow(settings or self.settings, self.run_id)
        return self.add(report)

    def add(self, report: StageReport, ended: str = "done") -> StageReport:
        self.reports.append(report)
        log.info(
            "%s %s in %.1f s: %d LLM calls made, %d from cache, %d rows added",
            report.stage,
            ended,
            report.seconds,
            report.llm_made,
            report.llm_cached,
            sum(report.rows_added.values()),
        )
        return report

    @property
    def note_path(self) -> Path:
        return note_path(self.settings.data_dir, self.run_id)

    def reserve_note(self) -> None:
        """The file that keeps this run's final status should the warehouse refuse it."""
        reserve_note(self.note_path)

    def save_final(self, status: str, message: str = "") -> None:
        """`save`, and where the warehouse cannot take it (a full disk), the status and why
        go into the reserved note, for the next start to record."""
        try:
            self.save(status, message)
        except Exception as exc:
            why = f"{message}; the run's record could not be written: {type(exc).__name__}: {exc}"
            write_note(self.note_path, status, why.strip("; "))
            raise
        self.note_path.unlink(missing_ok=True)

    def save(self, status: str, message: str = "") -> None:
        reports = self.reports
        rows_added: dict[str, int] = {}
        seconds: dict[str, float] = {}
        for r in reports:
            seconds[r.stage] = round(seconds.get(r.stage, 0.0) + r.seconds, 3)
            for table, n in r.rows_added.items():
                rows_added[table] = rows_added.get(table, 0) + n
        unpriced = sorted({m for r in reports for m in r.unpriced})
        if status != "running":
            self.row["finished_at"] = _now()
            if unpriced:  # said once a run, not once a call
                log.warning(
                    "no price for %s: this run's cost is unknown; set llm.prices or "
                    'judge.prices (docs/operations.md, "Prices")',
                    ", ".join(unpriced),
                )
        self.row.update(
            status=status,
            llm_calls_made=sum(r.llm_made for r in reports),
            llm_calls_cached=sum(r.llm_cached for r in reports),
            tokens_in=sum(r.tokens_in for r in reports),
            tokens_out=sum(r.tokens_out for r in reports),
            cost=None if unpriced else round(sum(r.cost for r in reports), 6),
            embeddings_made=sum(r.embeddings_made for r in reports),
            embeddings_cached=sum(r.embeddings_cached for r in reports),
            rows_added=rows_added,
            stage_seconds=seconds,
            message=message,
        )
        with open_warehouse(self.settings) as wh:
            wh.upsert("runs", [self.row], ("run_id",), update=True)

    def failures(self) -> str:
        """What failed in this run's units, in words; empty when nothing did."""
        with open_warehouse(self.settings) as wh:
            generations, first, held = run_failures(wh, self.run_id)
        parts = [f"{generations} failed generations ({(first or '')[:200]})"] if generations else []
        parts += [f"{n} quarantined {reason}" for reason, n in held]
        return "; ".join(parts)

    def summary(self) -> dict[str, Any]:
        """The run row with its stages and where the results are, for the caller to show."""
        return {
            **self.row,
            "stages": [r.__dict__ for r in self.reports],
            "db_path": str(self.settings.db_path),
            "published_path": str(self.settings.published_path),
        }


@contextmanager
def recorded_run(settings: Settings, flow_name: str) -> Iterator[RunRecord]:
    """The run row is written first (status `running`, with this process), after marking
    the runs whose process is gone `crashed`, folding their call logs into the ledger and
    removing the temp files they left; a fresh warehouse is published at once, so analysts
    have a copy from the first minute. At the end the run is `completed`, `partial` (some
    units failed) or `failed` with the exception, which is re-raised, and the copy is
    published again with the run's results and final status."""
    run = RunRecord(settings, flow_name)
    for path in remove_stale_temp(settings.data_dir):
        log.warning("removed %s, left by a killed run", path)
    with open_warehouse(settings) as wh:
        mark_crashed(wh, run.run_id)
        added, seen = fold_call_logs(wh, settings.data_dir)
        if seen:
            log.warning(
                "%d row%s added to the LLM call ledger from the call logs of killed or stopped "
                "runs (%d calls logged; the others were in the ledger already)",
                added,
                "" if added == 1 else "s",
                seen,
            )
        if not settings.published_path.exists():
            publish_warehouse(wh, settings.published_path, settings.data_dir)
    run.save("running")
    run.reserve_note()
    try:
        yield run
    except BaseException as exc:
        if unfinished := unfinished_report(run.run_id):  # the stage the exception stopped
            run.add(unfinished, "stopped")
        signum = interrupt_signal(exc)
        if (spent := budget_spent(exc)) is not None:  # its cap: as a Ctrl-C, said so
            stop(signal.SIGINT)
            run.save_final("stopped", spent)
        elif signum is not None:  # Ctrl-C or SIGTERM: no new call; finished work is kept
            stop(signum)
            run.save_final(
                "interrupted",
                f"stopped by {signal.Signals(signum).name}: finished work is kept; "
                "the same command resumes the run",
            )
        else:
            run.save_final("failed", redacted(exc, settings))
        publish(settings, quiet=True)
        run_artifact(run.row, run.reports, settings.published_path)
        raise
    failures = run.failures()
    if failures:
        run.save_final(
            "partial", f"{failures}: `lilo failures` lists them; the next run retries them"
        )
    else:
        run.save_final("completed")
    publish(settings)
    run_artifact(run.row, run.reports, settings.published_path)
