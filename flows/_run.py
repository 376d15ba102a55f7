"""A run's record in the `runs` table: written when the run starts (with the process that
runs it), and at the end `completed`, `partial` (some units failed: failed generations,
`llm_error`/`judge_unusable` quarantine rows) or `failed` (with why), with what its stages
reported (DESIGN §10). A run stopped by SIGINT or SIGTERM is `interrupted` (tasks/lifetime.py).
A run killed before its end is marked `crashed` by the next start; one whose last write
failed (a full disk) is marked with the status and reason it could not write, kept in a
small file reserved when it started."""

from __future__ import annotations

import json
import os
import signal
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect.runtime import flow_run

from flows._stage import StageReport, fold_call_logs, log, open_warehouse
from tasks.config import Settings
from tasks.errors import LiloError
from tasks.lifetime import interrupt_signal, stop
from tasks.llm import make_client
from tasks.provenance import code_version
from tasks.redact import redacted
from warehouse import Warehouse
from warehouse.db import pid_alive, remove_stale_temp
from warehouse.queries.runs import mark_run, run_failures, running_runs

__all__ = ["RunFailed", "RunRecord", "mark_crashed", "recorded_run"]

# The size reserved for a run's last word (`RunRecord.note_path`): rewritten in place, a
# full disk cannot refuse it.
_NOTE_BYTES = 4096


class RunFailed(LiloError, RuntimeError):
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

    def add(self, report: StageReport) -> StageReport:
        self.reports.append(report)
        log.info(
            "%s done in %.1f s: %d LLM calls made, %d from cache, %d rows added",
            report.stage,
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
        self.note_path.parent.mkdir(parents=True, exist_ok=True)
        self.note_path.write_bytes(b" " * _NOTE_BYTES)

    def save_final(self, status: str, message: str = "") -> None:
        """`save`, and where the warehouse cannot take it (a full disk), the status and why
        go into the reserved note, for the next start to record."""
        try:
            self.save(status, message)
        except Exception as exc:
            why = f"{message}; the run's record could not be written: {type(exc).__name__}: {exc}"
            note = json.dumps({"status": status, "message": why.strip("; ")}).encode()
            with self.note_path.open("r+b") as f:  # in place: no new block to allocate
                f.write(note[:_NOTE_BYTES].ljust(_NOTE_BYTES))
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
        if status != "running":
            self.row["finished_at"] = _now()
        self.row.update(
            status=status,
            llm_calls_made=sum(r.llm_made for r in reports),
            llm_calls_cached=sum(r.llm_cached for r in reports),
            tokens_in=sum(r.tokens_in for r in reports),
            tokens_out=sum(r.tokens_out for r in reports),
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
        parts = [f"{generations} failed generations ({first[:200]})"] if generations else []
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


def mark_crashed(wh: Warehouse, run_id: str) -> int:
    """Mark `crashed` the `running` rows of this machine whose process is gone (killed, or
    the machine restarted), and those from before runs recorded their process; returns how
    many. A row from another machine is left alone: its process cannot be seen from here."""
    host = socket.gethostname()
    gone = [
        r
        for r, pid, h in running_runs(wh)
        if r != run_id
        and (pid is None or (h == host and pid != os.getpid() and not pid_alive(pid)))
    ]
    data_dir = Path(wh.path).parent
    for gone_id in gone:
        path = note_path(data_dir, gone_id)
        note = _read_note(path)
        status, message = note or (
            "crashed",
            f"its process was gone when run {run_id} started: killed or crashed",
        )
        mark_run(wh, gone_id, status, message)
        if note:
            log.warning("run %s ended %s: %s", gone_id, status, message)
        else:
            log.warning("run %s was killed or crashed: marked crashed", gone_id)
        path.unlink(missing_ok=True)
    return len(gone)


def note_path(data_dir: Path, run_id: str) -> Path:
    return data_dir / "runs" / f"{run_id}.status"


def _read_note(path: Path) -> tuple[str, str] | None:
    """The status and message a run kept in its note when the warehouse refused them."""
    try:
        note = json.loads(path.read_bytes().strip() or b"null")
    except (OSError, ValueError):
        return None
    return (note["status"], note["message"]) if isinstance(note, dict) else None


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
        if folded := fold_call_logs(wh, settings.data_dir):
            log.warning("%d LLM calls of killed runs added to the ledger", folded)
        if not settings.published_path.exists():
            wh.publish(settings.published_path)
    run.save("running")
    run.reserve_note()
    try:
        yield run
    except BaseException as exc:
        signum = interrupt_signal(exc)
        if signum is not None:  # Ctrl-C or SIGTERM: no new call; finished work is kept
            stop(signum)
            run.save_final(
                "interrupted",
                f"stopped by {signal.Signals(signum).name}: finished work is kept; "
                "the same command resumes the run",
            )
        else:
            run.save_final("failed", redacted(exc, settings))
        _publish(settings, quiet=True)
        _run_artifact(run)
        raise
    failures = run.failures()
    if failures:
        run.save_final(
            "partial", f"{failures}: `lilo failures` lists them; the next run retries them"
        )
    else:
        run.save_final("completed")
    _publish(settings)
    _run_artifact(run)


def _run_artifact(run: RunRecord) -> None:
    """The run's record as a markdown artifact of the flow run itself (its stages' artifacts
    belong to their own subflow runs): status, each stage's time, calls and rows, and where
    the results are."""
    if flow_run.get_id() is None:  # not in a flow run (a bench, a test): nothing to attach to
        return
    from prefect.artifacts import create_markdown_artifact

    row = run.row
    lines = [
        f"# Run `{run.run_id}`: {row['status']}",
        "",
        *([f"> {row['message']}", ""] if row.get("message") else []),
        "| stage | seconds | LLM calls made | from cache | rows added |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {r.stage} | {r.seconds:.1f} | {r.llm_made} | {r.llm_cached} | "
            f"{sum(r.rows_added.values())} |"
            for r in run.reports
        ),
        "",
        f"Dataset version `{row['dataset_version']}`. Published copy for analysts: "
        f"`{run.settings.published_path}`. This run's other artifacts hold its results "
        "(`run-summary` links them all: leaderboard, position curve, cost, failures); the QA "
        "review batches are on the qa stage's run; `lilo failures` lists what failed.",
    ]
    try:
        create_markdown_artifact(
            "\n".join(lines), key="run-record", description=f"Run {row['status']}"
        )
    except Exception as exc:  # the run's record is in the warehouse already
        log.warning("the run's artifact was not created: %s", exc)


def _publish(settings: Settings, *, quiet: bool = False) -> None:
    """The copy analysts read, with this run's results and its final status. After a
    failure (`quiet`), a copy that cannot be made is a warning: the failure is the news."""
    try:
        with open_warehouse(settings) as wh:
            wh.publish(settings.published_path)
    except Exception as exc:
        if not quiet:
            raise
        log.warning("the published copy was not refreshed: %s", exc)
